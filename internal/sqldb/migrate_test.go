package sqldb

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// testMigrate runs on both engines (exercise).
func testMigrate(t *testing.T, db *sql.DB, d Dialect) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "migrations")
	write := func(name, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if res, err := Migrate(ctx, db, d, dir); err != nil || res.Files != 0 || len(res.Applied) != 0 {
		t.Fatalf("no migrations directory: %+v, %v", res, err)
	}
	write("002_fill.sql", "-- two statements in one file\nINSERT INTO m_people (name) VALUES ('ann');\nINSERT INTO m_people (name) VALUES ('bob');\n")
	write("001_people.sql", "CREATE TABLE m_people (name TEXT PRIMARY KEY);\n")
	write("000_empty.sql", "-- nothing yet\n")
	write("notes.txt", "not a migration")
	write(".draft.sql", "DROP TABLE m_people;")
	write("old/003_x.sql", "DROP TABLE m_people;")

	res, err := Migrate(ctx, db, d, dir)
	want := []string{"migrations/000_empty.sql", "migrations/001_people.sql", "migrations/002_fill.sql"}
	if err != nil || !reflect.DeepEqual(res.Applied, want) || res.Files != 3 {
		t.Fatalf("first run: %+v, %v; want applied %v", res, err, want)
	}
	if n := count(t, db, "SELECT count(*) FROM m_people"); n != 2 {
		t.Fatalf("%d people, want 2", n)
	}
	if res, err := Migrate(ctx, db, d, dir); err != nil || len(res.Applied) != 0 || len(res.Changed) != 0 {
		t.Fatalf("second run: %+v, %v; want nothing applied", res, err)
	}

	// A failing file rolls back whole, is not recorded, and stops the run.
	write("003_broken.sql", "CREATE TABLE m_half (x INTEGER);\nINSERT INTO m_nosuch VALUES (1);\n")
	write("004_later.sql", "CREATE TABLE m_later (x INTEGER);\n")
	_, err = Migrate(ctx, db, d, dir)
	if err == nil || !strings.HasPrefix(err.Error(), "zealgo: migration migrations/003_broken.sql: ") || !strings.Contains(err.Error(), "m_nosuch") {
		t.Fatalf("broken migration: %v", err)
	}
	for _, table := range []string{"m_half", "m_later"} {
		if _, err := db.Exec("SELECT count(*) FROM " + table); err == nil {
			t.Errorf("table %s exists after the failed run", table)
		}
	}
	write("003_broken.sql", "CREATE TABLE m_half (x INTEGER);\n")
	if res, err := Migrate(ctx, db, d, dir); err != nil || !reflect.DeepEqual(res.Applied, []string{"migrations/003_broken.sql", "migrations/004_later.sql"}) {
		t.Fatalf("after the fix: %+v, %v", res, err)
	}

	// An edited file that ran is reported, not run again.
	write("002_fill.sql", "INSERT INTO m_people (name) VALUES ('cy');\n")
	if res, err := Migrate(ctx, db, d, dir); err != nil || len(res.Applied) != 0 || !reflect.DeepEqual(res.Changed, []string{"migrations/002_fill.sql"}) {
		t.Fatalf("edited migration: %+v, %v", res, err)
	}
	if n := count(t, db, "SELECT count(*) FROM "+Table); n != 5 {
		t.Fatalf("%d recorded, want 5", n)
	}

	// Several migrators at once: each file runs once.
	write("005_count.sql", "CREATE TABLE m_count (x INTEGER);\nINSERT INTO m_count VALUES (1);\n")
	failures := concurrently(8, 8, func(int) error { _, err := Migrate(ctx, db, d, dir); return err })
	checkNoFailures(t, failures)
	if n := count(t, db, "SELECT count(*) FROM m_count"); n != 1 {
		t.Fatalf("005_count.sql ran %d times, want once", n)
	}
}

// TestMigrateTwoPools: two pools (as two processes) migrating one SQLite
// file at once run each file once.
func TestMigrateTwoPools(t *testing.T) {
	db1, src := openSQLiteTest(t)
	db2, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	dir := filepath.Join(t.TempDir(), "migrations")
	os.MkdirAll(dir, 0o755)
	for i, name := range []string{"001_a.sql", "002_b.sql", "003_c.sql"} {
		body := "CREATE TABLE IF NOT EXISTS runs (file TEXT);\nINSERT INTO runs VALUES ('" + name + "');\n"
		if i == 0 {
			body = "CREATE TABLE runs (file TEXT);\nINSERT INTO runs VALUES ('" + name + "');\n"
		}
		os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644)
	}
	pools := []*sql.DB{db1, db2}
	failures := concurrently(8, 8, func(i int) error {
		_, err := Migrate(context.Background(), pools[i%2], SQLite, dir)
		return err
	})
	checkNoFailures(t, failures)
	if n := count(t, db1, "SELECT count(*) FROM runs"); n != 3 {
		t.Fatalf("%d runs, want 3", n)
	}
}
