package host_test

import (
	"database/sql"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// TestProvideInOnStart: a value given to Provide inside an OnStart hook,
// here one built on the database, is injected like one given before the
// start; after the start Provide panics saying what to do instead.
func TestProvideInOnStart(t *testing.T) {
	root := testutil.WriteTree(t, map[string]string{
		"migrations/001_words.sql": "CREATE TABLE words (word TEXT);\nINSERT INTO words VALUES ('database');\n",
		"api/greet.go": "//go:build ignore\n\npackage main\n\nimport \"strings\"\n\n" +
			"var greet = func(early *strings.Builder, late *strings.Replacer) string {\n" +
			"\treturn late.Replace(early.String() + \" from WORD\")\n}\n",
	})
	var early strings.Builder
	early.WriteString("hello")
	a := startDBApp(t, root, func(app *host.App) {
		app.Provide(&early)
		app.OnStart(func(a *host.App) error {
			var word string
			if err := a.DB().QueryRow("SELECT word FROM words").Scan(&word); err != nil {
				return err
			}
			a.Provide(strings.NewReplacer("WORD", word))
			return nil
		})
	})
	status, body := dbRequest(a.srv.Client(), "GET", a.srv.URL+"/api/greet", "")
	if status != http.StatusOK || body != "hello from database" {
		t.Fatalf("GET /api/greet: %d %q\nlog:\n%s", status, body, a.logs)
	}
	if v, ok := a.app.Provided((*strings.Replacer)(nil)); !ok || v == nil {
		t.Errorf("Provided(*strings.Replacer) = %v, %v", v, ok)
	}

	msg := providePanic(func() { a.app.Provide(strings.NewReplacer()) })
	want := "zealgo: Provide(*strings.Replacer) after the application started: call Provide before it starts " +
		"(before host.Main, Serve or Handler) or inside an OnStart hook"
	if msg != want {
		t.Errorf("Provide after the start panics with %q, want %q", msg, want)
	}
}

// TestProvideRefuses: Provide refuses nil and *sql.DB, which the host
// opens itself, saying what to do instead.
func TestProvideRefuses(t *testing.T) {
	app := host.New()
	if msg := providePanic(func() { app.Provide(nil) }); !strings.HasPrefix(msg, "zealgo: Provide(nil): ") {
		t.Errorf("Provide(nil): %q", msg)
	}
	msg := providePanic(func() { app.Provide(&sql.DB{}) })
	if !strings.Contains(msg, "zealgo: Provide(*sql.DB): handlers already receive the application's database") || !strings.Contains(msg, "--db") {
		t.Errorf("Provide(*sql.DB): %q", msg)
	}
}

func providePanic(f func()) (msg string) {
	defer func() { msg = fmt.Sprint(recover()) }()
	f()
	return "no panic"
}
