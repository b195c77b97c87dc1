package hosttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// capture is a response line "capture NAME = SOURCE" that keeps a value of
// the response for the later requests, which use it as {{NAME}}.
type capture struct {
	line   string   // the line as written
	name   string   // the variable
	json   []string // source "json .a.0.b": the path's keys and indexes
	isJSON bool
	header string         // source "header Name [~regexp]"
	re     *regexp.Regexp // source "body ~regexp", or the header's regexp
}

// captureLine matches "capture NAME = SOURCE".
var captureLine = regexp.MustCompile(`^capture\s+([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(json|header|body)\s+(.+)$`)

// variable matches a use {{NAME}} in a request.
var variable = regexp.MustCompile(`\{\{([A-Za-z_][A-Za-z0-9_]*)\}\}`)

// isCapture reports whether the response line l is a capture, not a header
// check: a header name holds no space.
func isCapture(l string) bool {
	return strings.HasPrefix(l, "capture ") || strings.HasPrefix(l, "capture\t")
}

// parseCapture reads "capture NAME = json PATH", "capture NAME = header
// Name", "capture NAME = header Name ~regexp" or "capture NAME = body
// ~regexp".
func parseCapture(l string) (capture, error) {
	m := captureLine.FindStringSubmatch(strings.TrimSpace(l))
	if m == nil {
		return capture{}, fmt.Errorf("line %q: want \"capture NAME = json .path\", \"capture NAME = header Name [~regexp]\" or \"capture NAME = body ~regexp\"", l)
	}
	c := capture{line: strings.TrimSpace(l), name: m[1]}
	arg := strings.TrimSpace(m[3])
	var re string
	switch m[2] {
	case "json":
		if arg != "." && (!strings.HasPrefix(arg, ".") || strings.Contains(arg[1:]+".", "..")) {
			return c, fmt.Errorf("line %q: want a JSON path such as .user.token or .items.0.id", l)
		}
		c.isJSON = true
		if arg != "." {
			c.json = strings.Split(arg[1:], ".")
		}
		return c, nil
	case "header":
		c.header, re, _ = strings.Cut(arg, " ")
		if re = strings.TrimSpace(re); re == "" {
			return c, nil
		}
	default:
		re = arg
	}
	expr, ok := strings.CutPrefix(re, "~")
	if !ok {
		return c, fmt.Errorf("line %q: want a regular expression starting with ~", l)
	}
	var err error
	if c.re, err = regexp.Compile(expr); err != nil {
		return c, fmt.Errorf("line %q: %w", l, err)
	}
	return c, nil
}

// value returns what c captures from a response: the JSON value at the path
// (a string as it is, anything else as its JSON text), the header's values
// joined by ", ", or the first group of the regular expression over the
// body or the header (the whole match when it has no group).
func (c capture) value(header http.Header, body string) (string, error) {
	if c.isJSON {
		return jsonValue(body, c.json)
	}
	text := body
	if c.header != "" {
		values := header.Values(c.header)
		if len(values) == 0 {
			return "", fmt.Errorf("no header %s", c.header)
		}
		if text = strings.Join(values, ", "); c.re == nil {
			return text, nil
		}
	}
	m := c.re.FindStringSubmatch(text)
	switch {
	case m == nil && c.header != "":
		return "", fmt.Errorf("header %s = %q does not match %s", c.header, text, c.re)
	case m == nil:
		return "", fmt.Errorf("body %.300q does not match %s", text, c.re)
	case len(m) > 1:
		return m[1], nil
	}
	return m[0], nil
}

// jsonValue walks path (object keys, array indexes) in the JSON text body.
func jsonValue(body string, path []string) (string, error) {
	d := json.NewDecoder(strings.NewReader(body))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return "", fmt.Errorf("the body is not JSON: %w", err)
	}
	at := ""
	for _, k := range path {
		at += "." + k
		switch t := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = t[k]; !ok {
				return "", fmt.Errorf("the body has no %s", at)
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(t) {
				return "", fmt.Errorf("the body has no %s (an array of %d)", at, len(t))
			}
			v = t[i]
		default:
			return "", fmt.Errorf("the body has no %s (not an object or an array)", at)
		}
	}
	switch t := v.(type) {
	case nil:
		return "", fmt.Errorf("the body's %s is null", "."+strings.Join(path, "."))
	case string:
		return t, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// checkVariables checks that every {{NAME}} of the requests is captured by
// an earlier response: the request line, header line or body that uses an
// unknown one is named.
func (a *archive) checkVariables() error {
	known := map[string]bool{}
	for _, x := range a.exchanges {
		lines := []string{x.line}
		for _, h := range x.header {
			lines = append(lines, h.name+": "+h.value)
		}
		for i, l := range append(lines, x.body) {
			for _, m := range variable.FindAllStringSubmatch(l, -1) {
				if known[m[1]] {
					continue
				}
				where := fmt.Sprintf("line %q", l)
				if i == len(lines) {
					where = "body"
				}
				return fmt.Errorf("zealgo: hosttest: %s: %s: unknown variable {{%s}}: no earlier response captures it (\"capture %s = ...\")",
					x.name, where, m[1], m[1])
			}
		}
		for _, c := range x.captures {
			known[c.name] = true
		}
	}
	return nil
}

// substitute returns x with every {{NAME}} of its request replaced by the
// value vars holds.
func (x exchange) substitute(vars map[string]string) exchange {
	if len(vars) == 0 {
		return x
	}
	repl := func(s string) string {
		return variable.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := vars[m[2:len(m)-2]]; ok {
				return v
			}
			return m
		})
	}
	x.target, x.body = repl(x.target), repl(x.body)
	hdr := make([]headerLine, len(x.header))
	for i, h := range x.header {
		hdr[i] = headerLine{repl(h.name), repl(h.value)}
	}
	x.header = hdr
	return x
}

// capture keeps, in vars, each value x's response captures; it reports a
// capture that finds nothing as a failure and returns false.
func (x exchange) capture(got Exchange, vars map[string]string, res *Result) bool {
	for _, c := range x.captures {
		v, err := c.value(got.Header, got.Body)
		if err != nil {
			res.failf("%s %s: %s: %v", x.name, x.line, c.line, err)
			return false
		}
		vars[c.name] = v
	}
	return true
}
