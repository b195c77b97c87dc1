package host

import (
	"context"
	"database/sql"
	"log/slog"
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

// dbState is the application's database pool: the database component,
// opened at start-up (openDB) and closed after the OnStop hooks.
type dbState struct {
	pool *sql.DB
	src  sqldb.Source
	root string // the application root, which holds migrations/
	log  *slog.Logger
}

var typeSQLDB = reflect.TypeOf((*sql.DB)(nil))

// dbURL returns the database URL: Config.DB (which the serve flag --db
// sets), else $ZEALGO_DB; empty for the default.
func dbURL(cfg *Config) string {
	if cfg.DB != "" {
		return cfg.DB
	}
	return os.Getenv(DBEnv)
}

// openDB opens the pool at start-up, in the server (migrate true) and in
// each task worker. A database that was named is connected to at once, so
// that a wrong URL stops the start-up; the default SQLite file is made on
// first use. The server runs the migrations under migrations/ (of root)
// before the OnStart hooks.
func openDB(cfg *Config, log *slog.Logger, root string, migrate bool) (dbState, error) {
	src, err := sqldb.Parse(dbURL(cfg), filepath.Join(cfg.DataDir, DBFile))
	if err != nil {
		return dbState{}, err
	}
	pool, err := sqldb.Open(src)
	if err != nil {
		return dbState{}, err
	}
	d := dbState{pool: pool, src: src, root: root, log: log}
	if !src.Default {
		err = sqldb.Ping(context.Background(), pool, src, 10*time.Second)
	}
	if err == nil && migrate {
		log.Info("database", "db", src.String())
		_, err = d.migrate(context.Background())
	}
	if err != nil {
		pool.Close()
		return dbState{}, err
	}
	return d, nil
}

// migrate runs the migrations not yet run and logs each.
func (d *dbState) migrate(ctx context.Context) (sqldb.Result, error) {
	res, err := sqldb.Migrate(ctx, d.pool, d.src.Dialect, filepath.Join(d.root, "migrations"))
	for _, f := range res.Applied {
		d.log.Info("migrated", "file", f, "db", d.src.String())
	}
	for _, f := range res.Changed {
		d.log.Warn("zealgo: a migration that already ran has changed; it does not run again: add a new file instead",
			"file", f)
	}
	return res, err
}

// ready is the readiness probe of the database: it answers a ping.
func (d *dbState) ready(ctx context.Context) (bool, error) {
	if d.pool == nil {
		return false, nil
	}
	return true, d.pool.PingContext(ctx)
}

// close closes the pool, after the OnStop hooks.
func (d *dbState) close() {
	if d.pool == nil {
		return
	}
	if err := d.pool.Close(); err != nil {
		d.log.Warn("zealgo: closing the database", "err", err)
	}
}
