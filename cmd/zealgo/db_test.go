package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/internal/testutil"
)

const dbHandlerHead = "//go:build ignore\n\npackage main\n\nimport (\n\t\"database/sql\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n"

// dbTree is an application with two migrations and a notes endpoint on
// the database: POST through a *sql.DB parameter, GET through App().DB().
func dbTree(t *testing.T, notesTable string) string {
	return testutil.WriteTree(t, map[string]string{
		"migrations/001_notes.sql": notesTable,
		"migrations/002_seed.sql":  "INSERT INTO notes (title) VALUES ('seeded');\n",
		"api/notes.go": dbHandlerHead + `var post = func(api *host.API, db *sql.DB) (any, error) {
	title, _ := api.Input["title"].(string)
	_, err := db.Exec("INSERT INTO notes (title) VALUES ($1)", title)
	return map[string]any{"drivers": sql.Drivers()}, err
}

var get = func(api *host.API) (any, error) {
	var titles []string
	rows, err := api.App().DB().Query("SELECT title FROM notes ORDER BY title")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		titles = append(titles, s)
	}
	return titles, rows.Err()
}
`,
	})
}

// runEnv runs the binary with extra environment variables.
func runEnv(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}

// TestMigrateThenServe: `zealgo migrate` runs each migration once, then
// `zealgo serve` finds them run and serves handlers on the same database,
// for the default SQLite file, one named by ZEALGO_DB, and PostgreSQL
// named by --db. The three run in parallel with each other and with the
// package's other parallel tests: the PostgreSQL server's start (initdb)
// is mostly waiting on a loaded machine.
func TestMigrateThenServe(t *testing.T) {
	t.Parallel()
	t.Run("sqlite default", func(t *testing.T) {
		t.Parallel()
		root := dbTree(t, "CREATE TABLE notes (title TEXT NOT NULL);\n")
		testMigrateThenServe(t, root, nil, nil, "sqlite:"+filepath.Join(root, "data", "app.db"))
	})
	t.Run("sqlite from ZEALGO_DB", func(t *testing.T) {
		t.Parallel()
		root := dbTree(t, "CREATE TABLE notes (title TEXT NOT NULL);\n")
		file := filepath.Join(t.TempDir(), "elsewhere.db")
		testMigrateThenServe(t, root, nil, []string{"ZEALGO_DB=sqlite:" + file}, "sqlite:"+file)
		if _, err := os.Stat(filepath.Join(root, "data", "app.db")); err == nil {
			t.Error("the default file was made too")
		}
	})
	t.Run("postgres from --db", func(t *testing.T) {
		t.Parallel()
		url := testutil.Postgres(t)
		root := dbTree(t, "CREATE TABLE notes (title TEXT NOT NULL);\n")
		// The flag wins over the environment.
		testMigrateThenServe(t, root, []string{"--db", url}, []string{"ZEALGO_DB=sqlite:/nonexistent/ignored.db"}, url)
	})
}

func testMigrateThenServe(t *testing.T, root string, flags, env []string, shown string) {
	// check knows *sql.DB as injected (no "not injectable" warning).
	if _, errOut, code := run(t, "check", "--root", root); code != 0 || strings.Contains(errOut, "injectable") {
		t.Fatalf("check: exit %d: %s", code, errOut)
	}
	args := append([]string{"migrate", "--root", root}, flags...)
	out, errOut, code := runEnv(t, env, args...)
	if code != 0 || out != "applied migrations/001_notes.sql\napplied migrations/002_seed.sql\n" ||
		!strings.Contains(errOut, "zealgo migrate: 2 applied, 0 already run, on "+shown+"\n") {
		t.Fatalf("first migrate: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	out, errOut, code = runEnv(t, env, args...)
	if code != 0 || out != "" || !strings.Contains(errOut, "zealgo migrate: 0 applied, 2 already run") {
		t.Fatalf("second migrate: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}

	_, base, logs := serveEnv(t, root, env, flags...)
	status, _, body := fetch(t, "POST", base+"/api/notes", "application/json", `{"title":"typed"}`)
	if status != 200 || body != `{"drivers":["pgx","pgx/v5","sqlite"]}` {
		t.Fatalf("POST: %d %s\nlog:\n%s", status, body, logs)
	}
	status, _, body = fetch(t, "GET", base+"/api/notes", "", "")
	if status != 200 || body != `["seeded","typed"]` {
		t.Fatalf("GET: %d %s\nlog:\n%s", status, body, logs)
	}
	if strings.Contains(logs.String(), "msg=migrated") {
		t.Errorf("serve ran a migration again:\n%s", logs)
	}

	// A migration that fails: exit 1 naming the file; the next ones wait.
	os.WriteFile(filepath.Join(root, "migrations", "003_bad.sql"), []byte("INSERT INTO nosuch VALUES (1);\n"), 0o644)
	os.WriteFile(filepath.Join(root, "migrations", "004_later.sql"), []byte("INSERT INTO notes (title) VALUES ('later');\n"), 0o644)
	out, errOut, code = runEnv(t, env, args...)
	if code != 1 || out != "" || !strings.Contains(errOut, "zealgo: migration migrations/003_bad.sql: ") || !strings.Contains(errOut, "nosuch") {
		t.Fatalf("failing migrate: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	// serve runs the migrations first, and does not start past a failing one.
	serveArgs := append([]string{"serve", "--root", root, "--addr", testutil.FreeAddr(t)}, flags...)
	out, errOut, code = runEnv(t, env, serveArgs...)
	if code != 1 || !strings.Contains(errOut, "zealgo: migration migrations/003_bad.sql: ") {
		t.Fatalf("serve past a failing migration: exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
}
