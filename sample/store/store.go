// Package store is the accounts and notes store of zealgo's sample
// application: SQLite through GORM and github.com/glebarez/sqlite (pure Go,
// no cgo), one file in WAL mode. Handler files reach it as an injected
// parameter, s *store.Store, once the application has called
// app.Provide(s) and registered the package's symbols (package storesym).
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/glebarez/sqlite"
	"github.com/zealgo/zealgo/internal/sqldb"
	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// FileName is the name of the database file inside the data directory.
const FileName = "zealgo.db"

// BusyTimeout is how long a write waits for the write lock, held by
// another write of the pool or by another process, before it fails.
const BusyTimeout = sqldb.BusyTimeout

// ErrNotOpen is returned by a Store that has not been opened, or has been
// closed.
var ErrNotOpen = errors.New("zealgo: store: the database is not open")

// Store holds the sample application's accounts and notes. Its zero value
// (or New) is ready to be opened; every method is safe for concurrent use.
type Store struct {
	mu   sync.RWMutex
	db   *gorm.DB
	path string
	// caseDups are the usernames that differ only in case, found at Open.
	caseDups []string
	dummy    []byte // a bcrypt hash that Login verifies when the user is unknown
	// compare verifies a password against a hash: bcrypt, or a counting
	// stand-in in the package's tests.
	compare func(hash, password []byte) error
	cost    int // the bcrypt cost of new hashes (SetHashCost); 0: bcrypt.DefaultCost
}

// New returns a store that is not open yet: the application provides it
// to handler files before it starts and opens it at start-up, once the
// data directory is known.
func New() *Store { return &Store{compare: bcrypt.CompareHashAndPassword} }

// Open returns a store opened on the SQLite file at path.
func Open(path string) (*Store, error) {
	s := New()
	if err := s.Open(path); err != nil {
		return nil, err
	}
	return s, nil
}

// Open opens (creating it if needed) the SQLite database at path, with WAL
// journaling, a busy timeout and foreign keys on every connection, and
// migrates the users and notes tables. The pool is the application
// database's (internal/sqldb): at most sqldb.SQLiteMaxOpen connections,
// reads in parallel, writes one at a time in arrival order.
func (s *Store) Open(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return fmt.Errorf("zealgo: store: %w", err)
	}
	// Created here so that only its owner can read the password hashes;
	// SQLite gives the -wal and -shm files the same mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("zealgo: store: %w", err)
	}
	_ = f.Close()
	db, err := openDB(path)
	if err != nil {
		return err
	}
	dups, err := migrate(db)
	if err != nil {
		closeDB(db)
		return fmt.Errorf("zealgo: store: migrate %s: %w", path, err)
	}
	dummy, err := dummyHash(s.hashCost())
	if err != nil {
		closeDB(db)
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.db != nil {
		closeDB(db)
		return fmt.Errorf("zealgo: store: already open on %s", s.path)
	}
	s.db, s.path, s.dummy, s.caseDups = db, path, dummy, dups
	return nil
}

// CaseDuplicates returns the usernames of the open database that differ
// only in case, each group as "CaseUser, caseuser": accounts registered
// before usernames became unique whatever their case. While there are
// any, the database has no unique index on the folded name (registration
// still refuses new ones). Rename all but one of each group and restart
// to get the index.
func (s *Store) CaseDuplicates() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.caseDups)
}

// openDB opens GORM on a pool from internal/sqldb, the engine behind the
// host's own *sql.DB: bounded (sqldb.SQLiteMaxOpen connections), with a
// write gate that queues writers in order instead of leaving them to
// SQLite's busy handler, under which some starve past the busy timeout
// ("database is locked") when hundreds of requests write at once. The
// sample keeps synchronous=FULL, stricter than sqldb's default.
func openDB(path string) (*gorm.DB, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("zealgo: store: %w", err)
	}
	u := url.URL{Scheme: "sqlite", Path: filepath.ToSlash(abs), RawQuery: "_pragma=synchronous(FULL)"}
	src, err := sqldb.Parse(u.String(), "")
	if err != nil {
		return nil, fmt.Errorf("zealgo: store: %w", err)
	}
	pool, err := sqldb.Open(src)
	if err != nil {
		return nil, fmt.Errorf("zealgo: store: %w", err)
	}
	db, err := gorm.Open(sqlite.Dialector{Conn: pool}, &gorm.Config{
		TranslateError:         true,
		SkipDefaultTransaction: true,
		Logger:                 logger.Default.LogMode(logger.Silent),
		NowFunc:                func() time.Time { return time.Now().UTC() },
	})
	if err != nil {
		_ = pool.Close()
		return nil, fmt.Errorf("zealgo: store: open %s: %w", path, err)
	}
	return db, nil
}

// migrate creates or updates the tables and returns the usernames that
// differ only in case (see migrateUsernames).
func migrate(db *gorm.DB) ([]string, error) {
	if err := db.AutoMigrate(&User{}, &Note{}); err != nil {
		return nil, err
	}
	return migrateUsernames(db)
}

// The indexes on username COLLATE NOCASE (ASCII letters folded; the
// registration rule allows no others): unique, or, on a database that
// already holds names differing only in case, a plain one for lookups.
const (
	usernameIndex       = "users_username_nocase"
	usernameLegacyIndex = "users_username_nocase_legacy"
)

// migrateUsernames makes usernames unique whatever their case with a
// unique index, the users table left as it is. A database made before
// that rule may hold names that differ only in case ("CaseUser" and
// "caseuser"): the index cannot be made then, and no row is changed or
// dropped. Each such account still logs in by its exact name, and
// CreateAccount refuses new ones all the same; the names are returned,
// for the application to report, and the unique index is made at the
// first start after they are renamed.
func migrateUsernames(db *gorm.DB) ([]string, error) {
	var dups []string
	err := db.Raw("SELECT group_concat(username, ', ') FROM users GROUP BY username COLLATE NOCASE " +
		"HAVING count(*) > 1 ORDER BY username COLLATE NOCASE").Scan(&dups).Error
	if err != nil {
		return nil, err
	}
	if len(dups) > 0 {
		return dups, db.Exec("CREATE INDEX IF NOT EXISTS " + usernameLegacyIndex + " ON users (username COLLATE NOCASE)").Error
	}
	if err := db.Exec("CREATE UNIQUE INDEX IF NOT EXISTS " + usernameIndex + " ON users (username COLLATE NOCASE)").Error; err != nil {
		return nil, err
	}
	return nil, db.Exec("DROP INDEX IF EXISTS " + usernameLegacyIndex).Error
}

// SetHashCost sets the bcrypt cost of the hashes the store makes: of the
// passwords of accounts created from then on, and of the hash that Login
// verifies for an unknown user, made by Open (so call it before Open).
// The default, 0, is bcrypt.DefaultCost; a cost outside bcrypt.MinCost
// to bcrypt.MaxCost is taken as the default. A lower cost makes every
// guess of a stolen hash cheaper: keep the default in production. The
// sample's tests lower it to bcrypt.MinCost, where the race detector makes
// each hash at the default cost take over a second of CPU.
func (s *Store) SetHashCost(cost int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cost = cost
}

// hashCost returns the bcrypt cost of new hashes.
func (s *Store) hashCost() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.cost < bcrypt.MinCost || s.cost > bcrypt.MaxCost {
		return bcrypt.DefaultCost
	}
	return s.cost
}

// dummyHash hashes a random password, at the cost of real accounts.
func dummyHash(cost int) ([]byte, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("zealgo: store: %w", err)
	}
	h, err := bcrypt.GenerateFromPassword([]byte(hex.EncodeToString(b[:])), cost)
	if err != nil {
		return nil, fmt.Errorf("zealgo: store: %w", err)
	}
	return h, nil
}

// Path returns the path of the database file, or "" when not open.
func (s *Store) Path() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.path
}

// DB returns the GORM handle, or nil when the store is not open.
func (s *Store) DB() *gorm.DB {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.db
}

// conn returns the handle bound to ctx, or ErrNotOpen.
func (s *Store) conn(ctx context.Context) (*gorm.DB, error) {
	db := s.DB()
	if db == nil {
		return nil, ErrNotOpen
	}
	if ctx == nil {
		ctx = context.Background()
	}
	return db.WithContext(ctx), nil
}

// Close checkpoints and closes the database. Closing a store that is not
// open does nothing.
func (s *Store) Close() error {
	s.mu.Lock()
	db := s.db
	s.db, s.path, s.caseDups = nil, "", nil
	s.mu.Unlock()
	if db == nil {
		return nil
	}
	return closeDB(db)
}

func closeDB(db *gorm.DB) error {
	sqlDB, err := db.DB()
	if err != nil {
		return fmt.Errorf("zealgo: store: %w", err)
	}
	if err := sqlDB.Close(); err != nil {
		return fmt.Errorf("zealgo: store: close: %w", err)
	}
	return nil
}
