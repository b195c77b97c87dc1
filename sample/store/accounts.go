package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/zealgo/zealgo/host"
	"golang.org/x/crypto/bcrypt"
	"gorm.io/gorm"
)

// SessionKey is the session key that holds the logged-in account's id.
const SessionKey = "user_id"

// Limits of the registration rule.
const (
	UsernameMin = 3
	UsernameMax = 64
	PasswordMin = 8  // bytes
	PasswordMax = 72 // bytes: bcrypt reads no more
)

// ErrUsernameTaken is returned by CreateAccount when the username belongs
// to another account, in any case: usernames are kept as typed but unique
// whatever their case ("CaseUser" and "caseuser" are one name). Log-in
// needs the name in the case it was registered in, as the password must
// be typed exactly.
var ErrUsernameTaken = errors.New("zealgo: store: the username is taken")

// ErrBadCredentials is returned by CheckLogin when the username is unknown
// or the password does not match: the caller cannot tell which.
var ErrBadCredentials = errors.New("zealgo: store: wrong username or password")

// User is an account: the users table, exactly these columns.
type User struct {
	ID           int64  `gorm:"column:id;primaryKey;autoIncrement" json:"id"`
	Username     string `gorm:"column:username;type:text;unique;not null" json:"username"`
	PasswordHash string `gorm:"column:password_hash;type:text;not null" json:"-"`
	CreatedAt    int64  `gorm:"column:created_at;not null;autoCreateTime" json:"created_at"` // Unix seconds
}

// TableName names the users table.
func (User) TableName() string { return "users" }

// ValidationError is input that breaks a rule; Message says which, for
// the person who typed it.
type ValidationError struct {
	Field   string // "username", "password", "title", "body" or "id"
	Code    string // e.g. "invalid_username"
	Message string
}

// Error returns the message.
func (e *ValidationError) Error() string { return e.Message }

// ValidateCredentials checks a registration: username 3–64 characters of
// [A-Za-z0-9_.-], password 8–72 bytes. It returns the broken rule, or
// nil.
func ValidateCredentials(username, password string) *ValidationError {
	if n := len(username); n < UsernameMin || n > UsernameMax || strings.IndexFunc(username, badUsernameRune) >= 0 {
		return &ValidationError{Field: "username", Code: "invalid_username", Message: fmt.Sprintf(
			"The username must be %d to %d characters: letters, digits, underscore, dot or hyphen.", UsernameMin, UsernameMax)}
	}
	if n := len(password); n < PasswordMin || n > PasswordMax {
		return &ValidationError{Field: "password", Code: "invalid_password", Message: fmt.Sprintf(
			"The password must be %d to %d bytes long.", PasswordMin, PasswordMax)}
	}
	return nil
}

func badUsernameRune(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.', r == '-':
		return false
	}
	return true
}

// Register creates an account as the spec's registration rule says: the
// password hashed with bcrypt at the default cost (SetHashCost), the row inserted with a
// parameterized statement. It returns the new id and true, or 0 and false
// when the username is taken (in any case) or the insert fails.
// It does not apply ValidateCredentials; the endpoint does.
func (s *Store) Register(username, password string) (int64, bool) {
	id, err := s.CreateAccount(context.Background(), username, password)
	return id, err == nil
}

// CreateAccount is Register with a context and the reason of a failure:
// ErrUsernameTaken for a taken username, another error when the database
// or the hash fails.
func (s *Store) CreateAccount(ctx context.Context, username, password string) (int64, error) {
	if username == "" || password == "" {
		return 0, &ValidationError{Field: "username", Code: "invalid_credentials", Message: "The username and the password are required."}
	}
	var hash []byte
	cost := s.hashCost()
	err := withHashSlot(ctx, func() (err error) {
		hash, err = bcrypt.GenerateFromPassword([]byte(password), cost)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("zealgo: store: hash the password: %w", err)
	}
	db, err := s.conn(ctx)
	if err != nil {
		return 0, err
	}
	// One statement, so that SQLite's write lock covers the check and the
	// insert: no row is added when the name exists in any case. The unique
	// index of migrateUsernames says the same, where it could be made.
	var id int64
	err = db.Raw("INSERT INTO users (username, password_hash, created_at) SELECT ?, ?, ? "+
		"WHERE NOT EXISTS (SELECT 1 FROM users WHERE username = ? COLLATE NOCASE) RETURNING id",
		username, string(hash), time.Now().Unix(), username).Scan(&id).Error
	switch {
	case errors.Is(err, gorm.ErrDuplicatedKey), err == nil && id == 0:
		return 0, ErrUsernameTaken
	case err != nil:
		return 0, fmt.Errorf("zealgo: store: create account: %w", err)
	}
	return id, nil
}

// Login checks a username and password as the spec's login rule says and
// returns the account id and true, or 0 and false. An unknown username
// costs the same bcrypt verification as a wrong password.
func (s *Store) Login(username, password string) (int64, bool) {
	id, err := s.CheckLogin(context.Background(), username, password)
	return id, err == nil
}

// CheckLogin is Login with a context and the reason of a failure:
// ErrBadCredentials for an unknown username or a wrong password (the same
// error, after the same work), another error when the database fails.
func (s *Store) CheckLogin(ctx context.Context, username, password string) (int64, error) {
	db, err := s.conn(ctx)
	if err != nil {
		return 0, err
	}
	var u User
	err = db.Select("id", "password_hash").Where("username = ?", username).Take(&u).Error
	switch {
	case errors.Is(err, gorm.ErrRecordNotFound):
		u.PasswordHash, u.ID = string(s.dummyHash()), 0
	case err != nil:
		return 0, fmt.Errorf("zealgo: store: login: %w", err)
	}
	var wrong error
	if err := withHashSlot(ctx, func() error {
		wrong = s.compareHash([]byte(u.PasswordHash), []byte(password))
		return nil
	}); err != nil {
		return 0, fmt.Errorf("zealgo: store: login: %w", err)
	}
	if wrong != nil || u.ID == 0 {
		return 0, ErrBadCredentials
	}
	return u.ID, nil
}

// hashSlots bounds the bcrypt computations under way in the process to
// the CPU count: a burst of log-ins or registrations queues for the CPUs
// instead of taking them from every other request, which would then run
// past the execution limit.
var hashSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// withHashSlot runs f, a bcrypt computation, when a slot is free, or
// returns the error of ctx when it ends first (the request's execution
// limit, or the client gone).
func withHashSlot(ctx context.Context, f func() error) error {
	select {
	case hashSlots <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("zealgo: store: waiting for a CPU to check a password: %w", ctx.Err())
	}
	defer func() { <-hashSlots }()
	return f()
}

func (s *Store) compareHash(hash, password []byte) error {
	if s.compare == nil { // a zero Store
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	return s.compare(hash, password)
}

func (s *Store) dummyHash() []byte {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dummy
}

// UserByID returns the account with the given id, or nil and no error
// when there is none.
func (s *Store) UserByID(ctx context.Context, id int64) (*User, error) {
	db, err := s.conn(ctx)
	if err != nil {
		return nil, err
	}
	var u User
	err = db.Where("id = ?", id).Take(&u).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("zealgo: store: load user %d: %w", id, err)
	}
	return &u, nil
}

// CurrentUser returns the account whose id the request's session holds
// under "user_id", or nil when there is none, when the account no longer
// exists, or when the database fails.
func (s *Store) CurrentUser(g *host.RequestContext) *User {
	if g == nil || g.Session == nil {
		return nil
	}
	id, ok := g.Session.Int64(SessionKey)
	if !ok {
		return nil
	}
	ctx := context.Background()
	if g.Request != nil {
		ctx = g.Request.Context()
	}
	u, err := s.UserByID(ctx, id)
	if err != nil {
		return nil
	}
	return u
}
