package host

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"time"

	"github.com/zealgo/zealgo/internal/sqldb"
)

// DBEnv is the environment variable that names the application's database
// when neither the serve flag --db nor Config.DB does: sqlite:PATH or
// postgres://user:password@host/dbname. Prefer it to the flag for a URL
// with a password.
const DBEnv = "ZEALGO_DB"

// DBFile is the default database: SQLite, this file under the data
// directory.
const DBFile = "app.db"

// WithDB sets Config.DB.
func WithDB(url string) Option { return func(c *Config) { c.DB = url } }

// dbState is the application's database pool.
type dbState struct {
	pool *sql.DB
	src  sqldb.Source
}

var typeSQLDB = reflect.TypeOf((*sql.DB)(nil))

// DB returns the application's database pool, open from start-up until
// Close, nil before: SQLite in <data dir>/app.db (write-ahead log, a busy
// timeout, foreign keys on, writes one at a time, reads in parallel)
// unless --db, Config.DB or $ZEALGO_DB name another database, sqlite:PATH
// or postgres://.... A handler or task parameter of type *sql.DB receives
// the same pool. OnStart hooks see it open, with the migrations run.
func (a *App) DB() *sql.DB { return a.db.pool }

// dbURL returns the database URL: Config.DB (which the serve flag --db
// sets), else $ZEALGO_DB; empty for the default.
func (a *App) dbURL() string {
	if a.cfg.DB != "" {
		return a.cfg.DB
	}
	return os.Getenv(DBEnv)
}

// openDB opens the pool at start-up, in the server (migrate true) and in
// each task worker. A database that was named is connected to at once, so
// that a wrong URL stops the start-up; the default SQLite file is made on
// first use. The server runs the migrations under migrations/ before the
// OnStart hooks.
func (a *App) openDB(migrate bool) error {
	src, err := sqldb.Parse(a.dbURL(), filepath.Join(a.cfg.DataDir, DBFile))
	if err != nil {
		return err
	}
	pool, err := sqldb.Open(src)
	if err != nil {
		return err
	}
	a.db = dbState{pool: pool, src: src}
	if !src.Default {
		err = sqldb.Ping(context.Background(), pool, src, 10*time.Second)
	}
	if err == nil && migrate {
		a.Logger().Info("database", "db", src.String())
		_, err = a.migrate(context.Background())
	}
	if err != nil {
		pool.Close()
		a.db = dbState{}
	}
	return err
}

// migrate runs the migrations not yet run and logs each.
func (a *App) migrate(ctx context.Context) (sqldb.Result, error) {
	res, err := sqldb.Migrate(ctx, a.db.pool, a.db.src.Dialect, filepath.Join(a.dirs.root, "migrations"))
	for _, f := range res.Applied {
		a.Logger().Info("migrated", "file", f, "db", a.db.src.String())
	}
	for _, f := range res.Changed {
		a.Logger().Warn("zealgo: a migration that already ran has changed; it does not run again: add a new file instead",
			"file", f)
	}
	return res, err
}

// closeDB closes the pool, after the OnStop hooks.
func (a *App) closeDB() {
	if a.db.pool == nil {
		return
	}
	if err := a.db.pool.Close(); err != nil {
		a.Logger().Warn("zealgo: closing the database", "err", err)
	}
}
