// Package sqldb is the database engine behind an application's *sql.DB: it
// parses a database URL, opens a bounded pool on the pure-Go SQLite driver
// (github.com/glebarez/go-sqlite, no cgo) or on PostgreSQL
// (github.com/jackc/pgx/v5/stdlib), and runs the .sql migrations of a
// directory once each. It knows nothing of the host.
package sqldb

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
)

// Dialect names a database engine.
type Dialect string

// The engines Open knows.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// Source is a parsed database URL.
type Source struct {
	// Dialect is the engine.
	Dialect Dialect
	// Path is the SQLite database file, absolute; empty for PostgreSQL.
	Path string
	// Default is true when no URL was given and Path is the default file.
	Default bool
	// query holds the SQLite URL's own query parameters (extra _pragma
	// values), added after the defaults.
	query string
	// dsn is what the PostgreSQL driver opens.
	dsn string
	// display is the URL with its password hidden.
	display string
}

// String returns the URL with its password hidden, for messages and logs.
func (s Source) String() string { return s.display }

// Parse parses a database URL:
//
//	""                                  SQLite at defaultPath
//	sqlite:data/app.db                  SQLite, a path relative to the working directory
//	sqlite:///var/lib/app/app.db        SQLite, an absolute path
//	postgres://user:pass@host:5432/db   PostgreSQL (also postgresql://), with
//	                                    pgx's parameters (sslmode=disable, ...)
//
// A SQLite URL may add _pragma=NAME(VALUE) query parameters, run on every
// connection after the defaults.
func Parse(raw, defaultPath string) (Source, error) {
	if raw == "" {
		abs, err := filepath.Abs(defaultPath)
		if err != nil {
			return Source{}, fmt.Errorf("zealgo: database: %w", err)
		}
		return Source{Dialect: SQLite, Path: abs, Default: true, display: "sqlite:" + abs}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Source{}, fmt.Errorf("zealgo: database URL: %w (use sqlite:PATH or postgres://user:password@host/dbname)", redactErr(err))
	}
	switch strings.ToLower(u.Scheme) {
	case "sqlite", "sqlite3":
		return parseSQLite(u)
	case "postgres", "postgresql":
		if u.Host == "" && u.Query().Get("host") == "" {
			return Source{}, fmt.Errorf("zealgo: database URL %s names no host", u.Redacted())
		}
		return Source{Dialect: Postgres, dsn: raw, display: u.Redacted()}, nil
	case "":
		return Source{}, fmt.Errorf("zealgo: database URL %q has no scheme: use sqlite:PATH or postgres://user:password@host/dbname", u.Redacted())
	}
	return Source{}, fmt.Errorf("zealgo: database URL %s: unknown scheme %q: use sqlite:PATH or postgres://user:password@host/dbname", u.Redacted(), u.Scheme)
}

// parseSQLite takes the path from sqlite:PATH, sqlite:///ABS or
// sqlite://REL/PATH.
func parseSQLite(u *url.URL) (Source, error) {
	p := u.Opaque
	if p == "" {
		p = u.Host + u.Path
	}
	if p == "" {
		return Source{}, fmt.Errorf("zealgo: database URL %s names no file: use sqlite:PATH", u.Redacted())
	}
	if p == ":memory:" || strings.HasPrefix(p, "file:") {
		return Source{}, fmt.Errorf("zealgo: database URL %s: give a file path (an in-memory database would be one per connection of the pool)", u.Redacted())
	}
	abs, err := filepath.Abs(filepath.FromSlash(p))
	if err != nil {
		return Source{}, fmt.Errorf("zealgo: database URL %s: %w", u.Redacted(), err)
	}
	for k := range u.Query() {
		if k != "_pragma" {
			return Source{}, fmt.Errorf("zealgo: database URL %s: unknown parameter %q (only _pragma=NAME(VALUE) is taken)", u.Redacted(), k)
		}
	}
	return Source{Dialect: SQLite, Path: abs, query: u.RawQuery, display: "sqlite:" + abs}, nil
}

// redactErr drops the URL from a url.Parse error, which would print its
// password.
func redactErr(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
