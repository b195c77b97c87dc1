package sqldb

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// SQLite lets one connection write at a time. Left to itself, a writer
// that finds the database locked sleeps and retries until its busy
// timeout, with no order among the waiters: under 50 concurrent writers
// some starve and fail with "database is locked", and a deferred
// transaction that reads and then writes fails at once. The pool
// therefore serialises writes itself: a write (any Exec, a query that is
// not a SELECT, a transaction that is not read-only) first takes the
// gate, a one-slot channel whose waiters are served in order, and holds
// it until the statement, or the transaction, ends. Reads take no gate
// and run in parallel (WAL). The busy timeout still covers other
// processes (task workers, zealgo migrate) writing to the same file.

// gate is the write lock of one SQLite pool.
type gate struct {
	slot chan struct{}
	wait time.Duration // how long a writer waits before it gives up
}

func newGate(wait time.Duration) *gate {
	return &gate{slot: make(chan struct{}, 1), wait: wait}
}

// errLocked is the error of a writer that waited too long for the gate.
var errLocked = errors.New("database is locked")

func (g *gate) lock(ctx context.Context) error {
	select {
	case g.slot <- struct{}{}:
		return nil
	default:
	}
	t := time.NewTimer(g.wait)
	defer t.Stop()
	select {
	case g.slot <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("zealgo: %w: no write lock after %s; another write holds it (a transaction left open, "+
			"or a statement run outside the transaction that holds it)", errLocked, g.wait)
	}
}

func (g *gate) unlock() { <-g.slot }

// sqliteConn is what the SQLite driver's connections implement.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
}

// gateConnector opens SQLite connections that take the gate to write.
type gateConnector struct {
	drv  driver.Driver
	dsn  string
	dir  string // the database file's directory, made before connecting
	gate *gate
}

func (c *gateConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return nil, fmt.Errorf("making its directory: %w", err)
	}
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	sc, ok := conn.(sqliteConn)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("zealgo: the SQLite driver's connection (%T) lacks the context methods", conn)
	}
	return &gateConn{c: sc, gate: c.gate}, nil
}

func (c *gateConnector) Driver() driver.Driver { return c.drv }

// gateConn is one connection. database/sql never uses a connection from
// two goroutines at once, so inTx needs no lock.
type gateConn struct {
	c    sqliteConn
	gate *gate
	inTx bool // a write transaction holding the gate is open
}

func (c *gateConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *gateConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	st, ok := s.(stmtContext)
	if !ok {
		s.Close()
		return nil, fmt.Errorf("zealgo: the SQLite driver's statement (%T) lacks the context methods", s)
	}
	return &gateStmt{s: st, conn: c, read: isRead(query)}, nil
}

func (c *gateConn) Close() error {
	if c.inTx { // the pool drops a connection whose transaction is still open
		c.inTx = false
		c.gate.unlock()
	}
	return c.c.Close()
}

func (c *gateConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *gateConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if opts.ReadOnly {
		return c.c.BeginTx(ctx, opts)
	}
	if err := c.gate.lock(ctx); err != nil {
		return nil, err
	}
	tx, err := c.c.BeginTx(ctx, opts)
	if err != nil {
		c.gate.unlock()
		return nil, err
	}
	c.inTx = true
	return &gateTx{tx: tx, conn: c}, nil
}

func (c *gateConn) Ping(ctx context.Context) error { return c.c.Ping(ctx) }

func (c *gateConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	release, err := c.acquire(ctx, false)
	if err != nil {
		return nil, err
	}
	defer release()
	return c.c.ExecContext(ctx, query, args)
}

func (c *gateConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	release, err := c.acquire(ctx, isRead(query))
	if err != nil {
		return nil, err
	}
	rows, err := c.c.QueryContext(ctx, query, args)
	return holdRows(rows, err, release)
}

// acquire takes the gate for a write outside a transaction and returns
// what releases it.
func (c *gateConn) acquire(ctx context.Context, read bool) (func(), error) {
	if read || c.inTx {
		return func() {}, nil
	}
	if err := c.gate.lock(ctx); err != nil {
		return nil, err
	}
	return c.gate.unlock, nil
}

// holdRows keeps the gate until rows are closed: a write that returns rows
// (INSERT ... RETURNING) holds SQLite's lock until its statement ends.
func holdRows(rows driver.Rows, err error, release func()) (driver.Rows, error) {
	if err != nil {
		release()
		return nil, err
	}
	if rc, ok := rows.(rowsColumns); ok {
		return &gateRows{rowsColumns: rc, release: release}, nil
	}
	release() // unknown rows: no gate to hold (never with this driver)
	return rows, nil
}

// gateTx releases the gate when its transaction ends.
type gateTx struct {
	tx   driver.Tx
	conn *gateConn
}

func (t *gateTx) Commit() error   { return t.end(t.tx.Commit) }
func (t *gateTx) Rollback() error { return t.end(t.tx.Rollback) }

func (t *gateTx) end(f func() error) error {
	err := f()
	if t.conn.inTx {
		t.conn.inTx = false
		t.conn.gate.unlock()
	}
	return err
}

// stmtContext is what the SQLite driver's statements implement.
type stmtContext interface {
	driver.Stmt
	driver.StmtExecContext
	driver.StmtQueryContext
}

// gateStmt is a prepared statement that takes the gate to write.
type gateStmt struct {
	s    stmtContext
	conn *gateConn
	read bool
}

func (s *gateStmt) Close() error  { return s.s.Close() }
func (s *gateStmt) NumInput() int { return s.s.NumInput() }

func (s *gateStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *gateStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func (s *gateStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	release, err := s.conn.acquire(ctx, false)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.s.ExecContext(ctx, args)
}

func (s *gateStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	release, err := s.conn.acquire(ctx, s.read)
	if err != nil {
		return nil, err
	}
	rows, err := s.s.QueryContext(ctx, args)
	return holdRows(rows, err, release)
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, v := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

// rowsColumns is what the SQLite driver's rows implement.
type rowsColumns interface {
	driver.Rows
	driver.RowsColumnTypeDatabaseTypeName
	driver.RowsColumnTypeLength
	driver.RowsColumnTypeNullable
	driver.RowsColumnTypePrecisionScale
	driver.RowsColumnTypeScanType
}

// gateRows releases the gate, if it holds it, when closed.
type gateRows struct {
	rowsColumns
	release func()
	closed  bool
}

func (r *gateRows) Close() error {
	err := r.rowsColumns.Close()
	if !r.closed {
		r.closed = true
		r.release()
	}
	return err
}

// isRead reports whether query only reads: it begins with SELECT, VALUES
// or EXPLAIN, or WITH and has no INSERT, UPDATE, DELETE or REPLACE. A
// statement taken for a write when it only reads just waits its turn.
func isRead(query string) bool {
	words := strings.FieldsFunc(stripComments(query), func(r rune) bool {
		return !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	if len(words) == 0 {
		return false
	}
	switch strings.ToUpper(words[0]) {
	case "SELECT", "VALUES", "EXPLAIN":
		return true
	case "WITH":
		for _, w := range words[1:] {
			switch strings.ToUpper(w) {
			case "INSERT", "UPDATE", "DELETE", "REPLACE":
				return false
			}
		}
		return true
	}
	return false
}

// stripComments removes the leading -- and /* */ comments and spaces of a
// statement.
func stripComments(q string) string {
	for {
		q = strings.TrimSpace(q)
		switch {
		case strings.HasPrefix(q, "--"):
			i := strings.IndexByte(q, '\n')
			if i < 0 {
				return ""
			}
			q = q[i+1:]
		case strings.HasPrefix(q, "/*"):
			i := strings.Index(q, "*/")
			if i < 0 {
				return ""
			}
			q = q[i+2:]
		default:
			return q
		}
	}
}
