package sqldb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	_ "github.com/glebarez/go-sqlite" // registers "sqlite": pure Go, no cgo
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib" // registers "pgx"
)

// Pool settings. A handler can change them through the *sql.DB
// (SetMaxOpenConns and the like).
const (
	// BusyTimeout is how long a SQLite write waits for the write lock,
	// held by another write of the pool or by another process, before it
	// fails with "database is locked".
	BusyTimeout = 5 * time.Second
	// SQLiteMaxOpen bounds a SQLite pool: reads run in parallel up to it,
	// writes one at a time.
	SQLiteMaxOpen = 8
	// PostgresMaxOpen bounds a PostgreSQL pool (the server's default
	// max_connections is 100, shared with every other client).
	PostgresMaxOpen = 16
)

// sqlitePragmas run on every new SQLite connection: write-ahead log (reads
// do not block the writer), the busy timeout, foreign keys enforced, and
// synchronous=NORMAL, which in WAL mode keeps the database intact and
// loses no commit when the process dies (only, perhaps, the last ones on
// a power cut). A URL's own _pragma values run after these and win. The
// busy timeout comes first: switching the journal mode takes a lock, and
// without a busy handler a connection opened while another writes fails
// at once with SQLITE_BUSY.
var sqlitePragmas = []string{
	fmt.Sprintf("busy_timeout(%d)", BusyTimeout.Milliseconds()),
	"journal_mode(WAL)",
	"foreign_keys(1)",
	"synchronous(NORMAL)",
}

// Open returns a pool on src. It does not connect: Ping does, so that the
// caller decides whether a default database file is created before it is
// used. A SQLite file's directory is made on the first connection.
func Open(src Source) (*sql.DB, error) {
	switch src.Dialect {
	case SQLite:
		return openSQLite(src, BusyTimeout)
	case Postgres:
		cfg, err := pgx.ParseConfig(src.dsn)
		if err != nil {
			return nil, fmt.Errorf("zealgo: database %s: %w", src, err)
		}
		db := stdlib.OpenDB(*cfg)
		db.SetMaxOpenConns(PostgresMaxOpen)
		db.SetMaxIdleConns(PostgresMaxOpen)
		db.SetConnMaxIdleTime(5 * time.Minute)
		return db, nil
	}
	return nil, fmt.Errorf("zealgo: database: unknown dialect %q", src.Dialect)
}

// openSQLite opens a SQLite pool whose writers wait up to wait for the
// gate.
func openSQLite(src Source, wait time.Duration) (*sql.DB, error) {
	if strings.ContainsRune(src.Path, '?') {
		return nil, fmt.Errorf("zealgo: database %s: a SQLite path cannot hold '?'", src)
	}
	drv, err := registered("sqlite")
	if err != nil {
		return nil, err
	}
	q := url.Values{"_txlock": {"immediate"}, "_pragma": sqlitePragmas}.Encode()
	if src.query != "" {
		q += "&" + src.query
	}
	db := sql.OpenDB(&gateConnector{drv: drv, dsn: src.Path + "?" + q, dir: filepath.Dir(src.Path), gate: newGate(wait)})
	db.SetMaxOpenConns(SQLiteMaxOpen)
	db.SetMaxIdleConns(SQLiteMaxOpen)
	return db, nil
}

// registered returns the driver registered under name.
func registered(name string) (driver.Driver, error) {
	db, err := sql.Open(name, "")
	if err != nil {
		return nil, fmt.Errorf("zealgo: database driver %q: %w", name, err)
	}
	defer db.Close()
	return db.Driver(), nil
}

// Ping connects to check that the database is there, within timeout.
func Ping(ctx context.Context, db *sql.DB, src Source, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		return fmt.Errorf("zealgo: database %s: %w", src, err)
	}
	return nil
}
