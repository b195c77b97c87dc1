package sqldb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	wd, _ := os.Getwd()
	for _, c := range []struct {
		raw     string
		dialect Dialect
		path    string // SQLite
		shown   string
	}{
		{"", SQLite, "/data/app.db", "sqlite:/data/app.db"},
		{"sqlite:rel/x.db", SQLite, filepath.Join(wd, "rel/x.db"), "sqlite:" + filepath.Join(wd, "rel/x.db")},
		{"sqlite:///abs/x.db", SQLite, "/abs/x.db", "sqlite:/abs/x.db"},
		{"sqlite:/abs/x.db", SQLite, "/abs/x.db", "sqlite:/abs/x.db"},
		{"sqlite://rel/x.db", SQLite, filepath.Join(wd, "rel/x.db"), "sqlite:" + filepath.Join(wd, "rel/x.db")},
		{"SQLITE3:/abs/x.db?_pragma=synchronous(FULL)", SQLite, "/abs/x.db", "sqlite:/abs/x.db"},
		{"postgres://ann:secret@db:5432/shop?sslmode=disable", Postgres, "", "postgres://ann:xxxxx@db:5432/shop?sslmode=disable"},
		{"postgresql://db/shop", Postgres, "", "postgresql://db/shop"},
	} {
		s, err := Parse(c.raw, "/data/app.db")
		if err != nil {
			t.Errorf("Parse(%q): %v", c.raw, err)
			continue
		}
		if s.Dialect != c.dialect || s.Path != c.path || s.String() != c.shown || s.Default != (c.raw == "") {
			t.Errorf("Parse(%q) = %+v (shown %s), want %s %q shown %s", c.raw, s, s, c.dialect, c.path, c.shown)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for raw, want := range map[string]string{
		"mysql://u:secret@h/db":           `unknown scheme "mysql"`,
		"app.db":                          "has no scheme",
		"sqlite:":                         "names no file",
		"sqlite::memory:":                 "in-memory",
		"sqlite:/x.db?cache=shared":       `unknown parameter "cache"`,
		"postgres:///shop":                "names no host",
		"postgres://u:secret@h:bad/db":    "invalid port",
		"postgres://u:secret@h/db\x7fbad": "invalid control character",
	} {
		_, err := Parse(raw, "/data/app.db")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "zealgo: ") {
			t.Errorf("Parse(%q) = %v, want an error with %q", raw, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Parse(%q) shows the password: %v", raw, err)
		}
	}
}

func TestIsRead(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT 1":                                  true,
		"  select * from t":                         true,
		"-- list\n/* all */ SELECT * FROM t":        true,
		"VALUES (1)":                                true,
		"explain query plan select 1":               true,
		"WITH x AS (SELECT 1) SELECT * FROM x":      true,
		"WITH x AS (SELECT 1) INSERT INTO t SELECT": false,
		"INSERT INTO t VALUES (1) RETURNING id":     false,
		"update t set a = 1":                        false,
		"PRAGMA journal_mode":                       false,
		"":                                          false,
		"-- only a comment":                         false,
	} {
		if got := isRead(q); got != want {
			t.Errorf("isRead(%q) = %v, want %v", q, got, want)
		}
	}
}
