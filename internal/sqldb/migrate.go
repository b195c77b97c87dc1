package sqldb

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Table records the migrations that ran: one row per file name.
const Table = "zealgo_migrations"

// migrateLock is the PostgreSQL advisory lock key that serialises
// migrations of several processes ("zealgo" in ASCII).
const migrateLock = 0x7a65616c676f

// Result is what Migrate did.
type Result struct {
	// Applied lists the files that ran now, in order.
	Applied []string
	// Changed lists files that ran before and have changed since: they do
	// not run again.
	Changed []string
	// Files is how many migration files there are.
	Files int
}

// Files lists the names of the .sql files directly in dir, in name
// order; none when dir does not exist.
func Files(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("zealgo: migrations: %w", err)
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".sql") && !strings.HasPrefix(n, ".") {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names, nil
}

// Migrate runs the .sql files of dir that have not run yet, in name
// order, each in a transaction of its own together with its row in Table,
// so that a file runs completely and once, or not at all. Several
// processes may migrate the same database at once: one runs each file,
// the others find it recorded. A file that fails stops the run with an
// error naming it; the files before it stay applied.
func Migrate(ctx context.Context, db *sql.DB, d Dialect, dir string) (Result, error) {
	names, err := Files(dir)
	res := Result{Files: len(names)}
	if err != nil || len(names) == 0 {
		return res, err
	}
	m := migrator{db: db, d: d}
	if err := m.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS "+Table+
			" (name TEXT PRIMARY KEY, checksum TEXT NOT NULL, applied_at BIGINT NOT NULL)")
		return err
	}); err != nil {
		return res, fmt.Errorf("zealgo: migrations: creating %s: %w", Table, err)
	}
	for _, name := range names {
		label := filepath.ToSlash(filepath.Join(filepath.Base(dir), name))
		body, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return res, fmt.Errorf("zealgo: migration %s: %w", label, err)
		}
		ran, changed, err := m.apply(ctx, name, string(body))
		if err != nil {
			return res, fmt.Errorf("zealgo: migration %s: %w", label, err)
		}
		if ran {
			res.Applied = append(res.Applied, label)
		}
		if changed {
			res.Changed = append(res.Changed, label)
		}
	}
	return res, nil
}

// migrator runs migrations on one database.
type migrator struct {
	db *sql.DB
	d  Dialect
}

// apply runs one file unless Table records it; changed reports a recorded
// file whose content differs from what ran.
func (m migrator) apply(ctx context.Context, name, body string) (ran, changed bool, err error) {
	sum := sha256.Sum256([]byte(body))
	checksum := hex.EncodeToString(sum[:])
	err = m.inTx(ctx, func(tx *sql.Tx) error {
		var had string
		err := tx.QueryRowContext(ctx, "SELECT checksum FROM "+Table+" WHERE name = "+m.arg(1), name).Scan(&had)
		if err == nil {
			changed = had != checksum
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		if strings.TrimSpace(body) != "" {
			if _, err := tx.ExecContext(ctx, body); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, "INSERT INTO "+Table+" (name, checksum, applied_at) VALUES ("+
			m.arg(1)+", "+m.arg(2)+", "+m.arg(3)+")", name, checksum, time.Now().Unix())
		ran = err == nil
		return err
	})
	return ran, changed, err
}

// inTx runs f in a write transaction, holding PostgreSQL's advisory lock
// (SQLite's write lock is taken by the transaction itself).
func (m migrator) inTx(ctx context.Context, f func(*sql.Tx) error) error {
	tx, err := m.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if m.d == Postgres {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("SELECT pg_advisory_xact_lock(%d)", migrateLock)); err != nil {
			return err
		}
	}
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

// arg returns the dialect's placeholder for the n-th argument.
func (m migrator) arg(n int) string {
	if m.d == Postgres {
		return fmt.Sprintf("$%d", n)
	}
	return "?"
}
