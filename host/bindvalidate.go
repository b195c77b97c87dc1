package host

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"sync"

	"github.com/go-playground/locales/en"
	ut "github.com/go-playground/universal-translator"
	"github.com/go-playground/validator/v10"
	entrans "github.com/go-playground/validator/v10/translations/en"
)

// checker is a validator with its English messages. Two are kept, built
// once: one names fields by their JSON names, one by their form names, so
// that an error names a field as the client spelt it.
type checker struct {
	v     *validator.Validate
	trans ut.Translator
}

var (
	jsonChecker = sync.OnceValue(func() *checker { return newChecker("json") })
	formChecker = sync.OnceValue(func() *checker { return newChecker("form") })
)

func newChecker(body string) *checker {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(sf reflect.StructField) string { return clientName(sf, body) })
	trans, _ := ut.New(en.New()).GetTranslator("en")
	if err := entrans.RegisterDefaultTranslations(v, trans); err != nil {
		trans = nil // messages fall back to fieldMessage
	}
	return &checker{v: v, trans: trans}
}

// clientName is the name of sf as the client sends it: its param or query
// name, else its name in a body of kind body ("json" or "form").
func clientName(sf reflect.StructField, body string) string {
	keys := []string{"param", "query", body}
	if body == "form" {
		keys = append(keys, "json")
	}
	for _, k := range keys {
		if n, ok := tagName(sf, k); ok && n != "-" {
			return n
		}
	}
	return sf.Name
}

// validateStruct checks the validate tags of v, a struct: a 422
// validation_failed BindError names every failing field.
func validateStruct(v reflect.Value, form bool) error {
	c := jsonChecker()
	if form {
		c = formChecker()
	}
	err := c.check(v)
	var ve validator.ValidationErrors
	if !errors.As(err, &ve) {
		if err != nil {
			return fmt.Errorf("zealgo: Bind: %w", err)
		}
		return nil
	}
	root := ""
	if n := v.Type().Name(); n != "" {
		root = n + "."
	}
	fields := make([]FieldError, 0, len(ve))
	for _, fe := range ve {
		name := strings.TrimPrefix(fe.Namespace(), root)
		fields = append(fields, FieldError{Field: name, Rule: fe.Tag(), Param: fe.Param(), Message: c.message(fe, name)})
	}
	hint := fmt.Sprintf("%d field(s) failed validation: %s", len(fields), fieldNames(fields))
	return &BindError{Status: http.StatusUnprocessableEntity, Code: CodeValidationFailed, Hint: hint, Fields: fields}
}

// check runs the validator on v. A validate tag it cannot read (an
// unknown rule) makes it panic: that is the program's error, returned.
func (c *checker) check(v reflect.Value) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("zealgo: Bind: a validate tag of %s: %v", v.Type(), p)
		}
	}()
	return c.v.Struct(v.Addr().Interface())
}

// message is the English message of fe, naming the field by its path.
func (c *checker) message(fe validator.FieldError, path string) string {
	msg := ""
	if c.trans != nil {
		msg = fe.Translate(c.trans)
	}
	if msg == "" || strings.HasPrefix(msg, "Key: ") { // no translation for the rule
		return fieldMessage(fe, path)
	}
	if rest, ok := strings.CutPrefix(msg, fe.Field()); ok {
		return path + rest
	}
	return msg
}

// fieldMessage words a rule the translations do not cover.
func fieldMessage(fe validator.FieldError, path string) string {
	if fe.Param() != "" {
		return fmt.Sprintf("%s failed the rule %s=%s", path, fe.Tag(), fe.Param())
	}
	return fmt.Sprintf("%s failed the rule %s", path, fe.Tag())
}
