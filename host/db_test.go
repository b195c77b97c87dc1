package host_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
	"github.com/zealgo/zealgo/symbols"
)

const dbHead = "//go:build ignore\n\npackage main\n\nimport (\n\t\"database/sql\"\n\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n"

// dbFiles is an application that keeps notes in the database: POST
// inserts through a *sql.DB parameter, GET lists through App().DB(),
// /api/dbinfo tells whether both are the same pool and what the
// migrations left.
func dbFiles(notesTable string) map[string]string {
	return map[string]string{
		"migrations/001_notes.sql": notesTable,
		"migrations/002_seed.sql":  "CREATE TABLE seeds (n INTEGER NOT NULL);\nINSERT INTO seeds (n) VALUES (1);\n",
		"api/notes.go": dbHead + `var post = func(api *host.API, db *sql.DB) (any, error) {
	title, _ := api.Input["title"].(string)
	var id int64
	if err := db.QueryRow("INSERT INTO notes (title) VALUES ($1) RETURNING id", title).Scan(&id); err != nil {
		return nil, err
	}
	return map[string]any{"id": id}, nil
}

var get = func(api *host.API) (any, error) {
	rows, err := api.App().DB().Query("SELECT id, title FROM notes ORDER BY id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	notes := []map[string]any{}
	for rows.Next() {
		var id int64
		var title string
		if err := rows.Scan(&id, &title); err != nil {
			return nil, err
		}
		notes = append(notes, map[string]any{"id": id, "title": title})
	}
	return map[string]any{"notes": notes}, rows.Err()
}
`,
		"api/dbinfo.go": dbHead + `var dbinfo = func(api *host.API, db *sql.DB) (any, error) {
	same := "no"
	if db != nil && db == api.App().DB() {
		same = "yes"
	}
	var seeds, migrations int
	if err := db.QueryRow("SELECT count(*) FROM seeds").Scan(&seeds); err != nil {
		return nil, err
	}
	if err := db.QueryRow("SELECT count(*) FROM zealgo_migrations").Scan(&migrations); err != nil {
		return nil, err
	}
	return map[string]any{"same": same, "seeds": seeds, "migrations": migrations, "drivers": sql.Drivers()}, nil
}
`,
	}
}

const (
	sqliteNotes   = "CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL);\n"
	postgresNotes = "CREATE TABLE notes (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, title TEXT NOT NULL);\n"
)

// dbApp is an application served on loopback, started and stopped by the
// test.
type dbApp struct {
	app  *host.App
	srv  *httptest.Server
	logs *testutil.Buffer
}

// startDBApp serves root; configure, if not nil, configures the App
// before it starts.
func startDBApp(t *testing.T, root string, configure func(*host.App), opts ...host.Option) *dbApp {
	t.Helper()
	logs := &testutil.Buffer{}
	app := host.New(append([]host.Option{host.WithRoot(root), host.WithLogOutput(logs, slog.LevelInfo)}, opts...)...)
	app.Symbols(symbols.Symbols)
	if configure != nil {
		configure(app)
	}
	h, err := app.Handler()
	if err != nil {
		t.Fatal(err)
	}
	d := &dbApp{app: app, srv: httptest.NewServer(h), logs: logs}
	t.Cleanup(d.stop)
	return d
}

func (d *dbApp) stop() {
	d.srv.Close()
	d.app.Close()
}

// do sends a request and decodes the JSON answer, failing unless it is 200.
func (d *dbApp) do(t *testing.T, method, path, body string) map[string]any {
	t.Helper()
	status, out := dbRequest(d.srv.Client(), method, d.srv.URL+path, body)
	if status != http.StatusOK {
		t.Fatalf("%s %s: %d %s\nlog:\n%s", method, path, status, out, d.logs)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(out), &m); err != nil {
		t.Fatalf("%s %s: %v: %s", method, path, err, out)
	}
	return m
}

func dbRequest(c *http.Client, method, url, body string) (int, string) {
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestDBSQLite(t *testing.T) {
	root := testutil.WriteTree(t, dbFiles(sqliteNotes))
	testDB(t, root)
	if _, err := os.Stat(filepath.Join(root, "data", "app.db")); err != nil {
		t.Errorf("the default database is not <data>/app.db: %v", err)
	}
}

func TestDBPostgres(t *testing.T) {
	url := testutil.Postgres(t)
	root := testutil.WriteTree(t, dbFiles(postgresNotes))
	testDB(t, root, host.WithDB(url))
	if _, err := os.Stat(filepath.Join(root, "data", "app.db")); err == nil {
		t.Errorf("a SQLite file was made next to PostgreSQL")
	}
}

// testDB: insert and read through handlers, 100 concurrent inserts over
// 50 connections, migrations once each across restarts.
func testDB(t *testing.T, root string, opts ...host.Option) {
	a := startDBApp(t, root, nil, opts...)
	info := a.do(t, "GET", "/api/dbinfo", "")
	if info["same"] != "yes" || info["seeds"] != 1.0 || info["migrations"] != 2.0 {
		t.Fatalf("dbinfo %v, want the same pool, 1 seed, 2 migrations", info)
	}
	if got := fmt.Sprint(info["drivers"]); !strings.Contains(got, "pgx") || !strings.Contains(got, "sqlite") {
		t.Errorf("sql.Drivers() = %s, want pgx and sqlite", got)
	}
	if id := a.do(t, "POST", "/api/notes", `{"title":"first"}`)["id"]; id != 1.0 {
		t.Fatalf("first note id %v", id)
	}
	notes := a.do(t, "GET", "/api/notes", "")["notes"].([]any)
	if len(notes) != 1 || notes[0].(map[string]any)["title"] != "first" {
		t.Fatalf("notes %v", notes)
	}

	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 50, MaxIdleConnsPerHost: 50}}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	var failed []string
	var wg sync.WaitGroup
	for c := 0; c < 50; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			for k := 0; k < 2; k++ {
				status, body := dbRequest(client, "POST", a.srv.URL+"/api/notes", fmt.Sprintf(`{"title":"n%d-%d"}`, c, k))
				if status != http.StatusOK {
					mu.Lock()
					failed = append(failed, fmt.Sprintf("%d %s", status, body))
					mu.Unlock()
				}
			}
		}(c)
	}
	wg.Wait()
	if len(failed) > 0 {
		t.Fatalf("%d of 100 inserts failed, the first: %s\nlog:\n%s", len(failed), failed[0], a.logs)
	}
	if n := len(a.do(t, "GET", "/api/notes", "")["notes"].([]any)); n != 101 {
		t.Fatalf("%d notes, want 101", n)
	}
	if strings.Contains(a.logs.String(), "locked") {
		t.Errorf("the log mentions a lock:\n%s", a.logs)
	}
	if n := strings.Count(a.logs.String(), "msg=migrated"); n != 2 {
		t.Errorf("%d migrations logged at the first start, want 2:\n%s", n, a.logs)
	}
	a.stop()

	// Restarts: a new migration runs once; the old ones do not run again.
	if err := os.WriteFile(filepath.Join(root, "migrations", "003_more.sql"), []byte("INSERT INTO seeds (n) VALUES (3);\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, want := range []float64{3, 3} {
		b := startDBApp(t, root, nil, opts...)
		info := b.do(t, "GET", "/api/dbinfo", "")
		if info["seeds"] != 2.0 || info["migrations"] != want {
			t.Fatalf("restart %d: dbinfo %v, want 2 seeds and %v migrations", i+1, info, want)
		}
		if n := len(b.do(t, "GET", "/api/notes", "")["notes"].([]any)); n != 101 {
			t.Fatalf("restart %d: %d notes, want 101", i+1, n)
		}
		if n := strings.Count(b.logs.String(), "msg=migrated"); n != 1-i {
			t.Errorf("restart %d: %d migrations logged, want %d:\n%s", i+1, n, 1-i, b.logs)
		}
		b.stop()
	}
}

// TestDBInTasks: a task parameter of type *sql.DB receives the worker's
// pool on the database the server names (here not the default file).
func TestDBInTasks(t *testing.T) {
	files := dbFiles(sqliteNotes)
	files["task/countnotes.go"] = "//go:build ignore\n\npackage main\n\nimport (\n\t\"context\"\n\t\"database/sql\"\n)\n\n" +
		"var countnotes = func(ctx context.Context, db *sql.DB, prefix string) (any, error) {\n" +
		"\tvar n int\n\terr := db.QueryRowContext(ctx, \"SELECT count(*) FROM notes WHERE title LIKE $1\", prefix+\"%\").Scan(&n)\n" +
		"\treturn n, err\n}\n"
	root := testutil.WriteTree(t, files)
	done := make(chan string, 1)
	a := startDBApp(t, root, func(app *host.App) {
		app.OnTaskFinish(func(id int64, result any, err error) { done <- fmt.Sprint(result, " ", err) })
	}, host.WithDB("sqlite:"+filepath.Join(t.TempDir(), "elsewhere.db")), host.WithTaskWorkers(1),
		host.WithConfig(func(c *host.Config) { c.WorkerCommand = testWorkerCommand }))
	for _, title := range []string{"task one", "task two", "other"} {
		a.do(t, "POST", "/api/notes", `{"title":"`+title+`"}`)
	}
	if _, err := a.app.Server().Task(host.Task{Handler: "/task/countnotes", Args: []any{"task"}}); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-done:
		if got != "2 <nil>" {
			t.Fatalf("task result %s, want 2 <nil>\nlog:\n%s", got, a.logs)
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("no task result within 15s\nlog:\n%s", a.logs)
	}
}

// TestDBStartupErrors: a wrong database URL stops the start-up with a
// message that names it, without its password.
func TestDBStartupErrors(t *testing.T) {
	for url, want := range map[string]string{
		"mysql://ann:secret@db/shop": `unknown scheme "mysql"`,
		"sqlite::memory:":            "in-memory",
		"postgres://ann:secret@" + testutil.FreeAddr(t) + "/shop":     "zealgo: database postgres://ann:xxxxx@127.0.0.1:",
		"sqlite:" + filepath.Join(os.DevNull, "cannot", "be", "a.db"): "/cannot/be/a.db: making its directory: mkdir /dev/null: not a directory",
	} {
		app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelInfo), host.WithDB(url))
		_, err := app.Handler()
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "secret") {
			t.Errorf("--db %s: %v, want an error with %q and no password", url, err, want)
		}
	}
	// The flag, through the command line.
	app := host.New(host.WithRoot(t.TempDir()), host.WithAddr("127.0.0.1:0"))
	var stderr bytes.Buffer
	if code := app.Run(context.Background(), []string{"serve", "--db", "mongodb://x"}, io.Discard, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), `zealgo: database URL mongodb://x: unknown scheme "mongodb"`) {
		t.Errorf("serve --db mongodb://x: exit %d: %s", code, stderr.String())
	}
}
