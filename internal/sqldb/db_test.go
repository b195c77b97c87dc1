package sqldb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zealgo/zealgo/internal/testutil"
)

// openSQLiteTest opens a pool on a new file.
func openSQLiteTest(t *testing.T) (*sql.DB, Source) {
	t.Helper()
	src, err := Parse("", filepath.Join(t.TempDir(), "data", "app.db"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, src
}

// openPostgresTest opens a pool on a server of the test's own.
func openPostgresTest(t *testing.T) (*sql.DB, Source) {
	t.Helper()
	src, err := Parse(testutil.Postgres(t), "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := Ping(context.Background(), db, src, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	return db, src
}

func TestSQLite(t *testing.T) {
	db, src := openSQLiteTest(t)
	if _, err := os.Stat(src.Path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open created the file before the first connection: %v", err)
	}
	if err := Ping(context.Background(), db, src, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	for pragma, want := range map[string]string{"journal_mode": "wal", "foreign_keys": "1", "busy_timeout": "5000", "synchronous": "1"} {
		var got string
		if err := db.QueryRow("PRAGMA " + pragma).Scan(&got); err != nil || got != want {
			t.Errorf("PRAGMA %s = %q, %v; want %q", pragma, got, err, want)
		}
	}
	exercise(t, db, SQLite)
}

func TestPostgres(t *testing.T) {
	db, _ := openPostgresTest(t)
	exercise(t, db, Postgres)
}

// exercise runs what both engines must do: insert and read, concurrent
// writers, migrations once each.
func exercise(t *testing.T, db *sql.DB, d Dialect) {
	mustExec(t, db, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER NOT NULL)")
	t.Run("insert and read", func(t *testing.T) {
		mustExec(t, db, "INSERT INTO items (id, name, n) VALUES ("+arg(d, 1)+", "+arg(d, 2)+", 0)", 1, "first")
		var name string
		if err := db.QueryRow("SELECT name FROM items WHERE id = "+arg(d, 1), 1).Scan(&name); err != nil || name != "first" {
			t.Fatalf("read %q, %v", name, err)
		}
	})
	t.Run("100 inserts from 50 goroutines", func(t *testing.T) {
		failures := concurrently(100, 50, func(i int) error {
			_, err := db.Exec("INSERT INTO items (id, name, n) VALUES ("+arg(d, 1)+", "+arg(d, 2)+", 0)", 1000+i, fmt.Sprint("item ", i))
			return err
		})
		checkNoFailures(t, failures)
		if n := count(t, db, "SELECT count(*) FROM items WHERE id >= 1000"); n != 100 {
			t.Fatalf("%d rows, want 100", n)
		}
	})
	t.Run("transactions that read then write", func(t *testing.T) {
		failures := concurrently(300, 50, func(i int) error {
			return readThenWrite(db, d, 5000+i)
		})
		checkNoFailures(t, failures)
		// Each transaction saw every row committed before it: n is unique.
		if n := count(t, db, "SELECT count(DISTINCT n) FROM items WHERE id >= 5000"); n != 300 {
			t.Fatalf("%d distinct counts, want 300: transactions overlapped", n)
		}
	})
	t.Run("migrations", func(t *testing.T) { testMigrate(t, db, d) })
}

// readThenWrite counts the rows and inserts one holding the count.
func readThenWrite(db *sql.DB, d Dialect, id int) error {
	tx, err := db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if d == Postgres { // SQLite's transactions are serialised already
		if _, err := tx.Exec("LOCK TABLE items IN EXCLUSIVE MODE"); err != nil {
			return err
		}
	}
	var n int
	if err := tx.QueryRow("SELECT count(*) FROM items WHERE id >= 5000").Scan(&n); err != nil {
		return err
	}
	if _, err := tx.Exec("INSERT INTO items (id, name, n) VALUES ("+arg(d, 1)+", 'tx', "+arg(d, 2)+")", id, n); err != nil {
		return err
	}
	return tx.Commit()
}

// TestSQLiteManyConnections opens the pool as wide as the writers (50),
// with transactions that hold the write lock for a while: without the
// write gate, SQLite's busy handler (sleep and retry, in no order) lets
// some writers starve past the busy timeout ("database is locked"); with
// it they queue. The timeout is 1 s here, against about 50 × 2 ms of
// queue.
func TestSQLiteManyConnections(t *testing.T) {
	src, err := Parse("sqlite:"+filepath.Join(t.TempDir(), "app.db")+"?_pragma=busy_timeout(1000)", "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := openSQLite(src, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(50)
	mustExec(t, db, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, n INTEGER NOT NULL)")
	failures := concurrently(600, 50, func(i int) error {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		defer tx.Rollback()
		if _, err := tx.Exec("INSERT INTO items (id, name, n) VALUES (?, 'tx', 0)", i); err != nil {
			return err
		}
		var n int // the handler's work inside its transaction
		if err := tx.QueryRow("SELECT count(*) FROM items").Scan(&n); err != nil {
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		_, err = db.Exec("UPDATE items SET name = 'seen' WHERE id = ?", i)
		return err
	})
	checkNoFailures(t, failures)
	if n := count(t, db, "SELECT count(*) FROM items WHERE name = 'seen'"); n != 600 {
		t.Fatalf("%d rows updated, want 600", n)
	}
}

// TestSQLiteWriteLockTimeout: a write outside the transaction that holds
// the write lock waits, then fails with a message that says why.
func TestSQLiteWriteLockTimeout(t *testing.T) {
	src, _ := Parse("", filepath.Join(t.TempDir(), "app.db"))
	db, err := openSQLite(src, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustExec(t, db, "CREATE TABLE t (v TEXT)")
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec("INSERT INTO t VALUES ('in tx')"); err != nil {
		t.Fatal(err)
	}
	_, err = db.Exec("INSERT INTO t VALUES ('outside')")
	if err == nil || !strings.Contains(err.Error(), "database is locked: no write lock after 200ms") ||
		!strings.Contains(err.Error(), "outside the transaction") {
		t.Fatalf("write outside the open transaction: %v", err)
	}
	var n int // reads go on while the transaction is open
	if err := db.QueryRow("SELECT count(*) FROM t").Scan(&n); err != nil || n != 0 {
		t.Fatalf("read during the transaction: %d, %v", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	mustExec(t, db, "INSERT INTO t VALUES ('after')") // the gate is free again
	if n := count(t, db, "SELECT count(*) FROM t"); n != 2 {
		t.Fatalf("%d rows, want 2", n)
	}
	// A write that returns rows holds the gate until its rows are closed.
	rows, err := db.Query("INSERT INTO t VALUES ('returning') RETURNING v")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("INSERT INTO t VALUES ('blocked')"); err == nil || !strings.Contains(err.Error(), "database is locked") {
		t.Fatalf("write while a RETURNING statement is open: %v", err)
	}
	rows.Close()
	mustExec(t, db, "INSERT INTO t VALUES ('free')")
}

func concurrently(n, workers int, f func(i int) error) []error {
	var mu sync.Mutex
	var failures []error
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				if err := f(i); err != nil {
					mu.Lock()
					failures = append(failures, err)
					mu.Unlock()
				}
			}
		}()
	}
	for i := 0; i < n; i++ {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return failures
}

func checkNoFailures(t *testing.T, failures []error) {
	t.Helper()
	if len(failures) > 0 {
		t.Fatalf("%d failed, the first: %v", len(failures), failures[0])
	}
}

func mustExec(t *testing.T, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

func count(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func arg(d Dialect, n int) string { return migrator{d: d}.arg(n) }
