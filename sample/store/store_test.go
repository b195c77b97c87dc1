package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// openTemp opens a store in a new temporary directory, hashing at
// bcrypt.MinCost (openQuick).
func openTemp(t *testing.T) *Store {
	t.Helper()
	s, err := openQuick(filepath.Join(t.TempDir(), "data", FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// openQuick is Open with the hashes (of accounts and the dummy one) at
// bcrypt.MinCost: under the race detector each hash at the default cost
// takes about a second of CPU. Only the tests of the cost itself
// (TestSampleStoreLoginCost, TestSampleStoreHashCost) open otherwise.
func openQuick(path string) (*Store, error) {
	s := New()
	s.SetHashCost(bcrypt.MinCost)
	if err := s.Open(path); err != nil {
		return nil, err
	}
	return s, nil
}

// TestSampleStoreOpen checks the connection settings every connection
// gets (WAL, busy timeout, foreign keys), the file's mode, and that
// opening an existing database again migrates nothing away.
func TestSampleStoreOpen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nested", "dir", FileName)
	s, err := openQuick(path)
	if err != nil {
		t.Fatal(err)
	}
	pragmas := []struct {
		name string
		want string
	}{
		{"journal_mode", "wal"},
		{"busy_timeout", "5000"},
		{"foreign_keys", "1"},
	}
	for _, p := range pragmas {
		var got string
		if err := s.DB().Raw("PRAGMA " + p.name).Scan(&got).Error; err != nil {
			t.Fatal(err)
		}
		if got != p.want {
			t.Errorf("PRAGMA %s = %q, want %q", p.name, got, p.want)
		}
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		t.Errorf("database file mode %v: others can read the password hashes", fi.Mode().Perm())
	}
	id, ok := s.Register("keeper", "password1")
	if !ok {
		t.Fatal("Register failed")
	}
	if _, err := s.CreateNote(context.Background(), id, "kept", "body"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Login("keeper", "password1"); ok {
		t.Error("a closed store logged in")
	}
	s2, err := openQuick(path)
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer s2.Close()
	if got, ok := s2.Login("keeper", "password1"); !ok || got != id {
		t.Errorf("after reopening: Login = %d, %v", got, ok)
	}
	notes, err := s2.Notes(context.Background(), id)
	if err != nil || len(notes) != 1 || notes[0].Title != "kept" {
		t.Errorf("after reopening: notes %+v, %v", notes, err)
	}
	if err := s2.Open(path); err == nil {
		t.Error("opening an open store succeeded")
	}
}

// TestSampleStoreRegister covers the registration rule at the store:
// unique usernames, (0, false) on a duplicate, a bcrypt hash.
func TestSampleStoreRegister(t *testing.T) {
	s := openTemp(t)
	id, ok := s.Register("alice", "password1")
	if !ok || id <= 0 {
		t.Fatalf("Register = %d, %v", id, ok)
	}
	if id2, ok := s.Register("alice", "password2"); ok || id2 != 0 {
		t.Errorf("duplicate Register = %d, %v; want 0, false", id2, ok)
	}
	if _, err := s.CreateAccount(context.Background(), "alice", "password3"); !errors.Is(err, ErrUsernameTaken) {
		t.Errorf("duplicate CreateAccount: %v, want ErrUsernameTaken", err)
	}
	if _, ok := s.Register("", "password1"); ok {
		t.Error("an empty username registered")
	}
	if _, ok := s.Register("long", strings.Repeat("x", 73)); ok {
		t.Error("a 73-byte password registered (bcrypt would ignore its tail)")
	}
	if got, ok := s.Login("alice", "password1"); !ok || got != id {
		t.Errorf("Login = %d, %v", got, ok)
	}
	if _, ok := s.Login("alice", "password2"); ok {
		t.Error("the duplicate's password logs in")
	}
	u, err := s.UserByID(context.Background(), id)
	if err != nil || u == nil || u.Username != "alice" || u.CreatedAt == 0 {
		t.Fatalf("UserByID = %+v, %v", u, err)
	}
	if bcrypt.CompareHashAndPassword([]byte(u.PasswordHash), []byte("password1")) != nil {
		t.Error("the stored hash does not verify")
	}
	if u, err := s.UserByID(context.Background(), id+100); u != nil || err != nil {
		t.Errorf("UserByID(missing) = %+v, %v; want nil, nil", u, err)
	}
}

// TestSampleStoreLoginCost checks that a login spends one bcrypt
// verification whether the username exists or not, and that the dummy
// hash used for unknown usernames has the default cost.
func TestSampleStoreLoginCost(t *testing.T) {
	s, err := Open(filepath.Join(t.TempDir(), FileName)) // the dummy hash at the default cost
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	s.SetHashCost(bcrypt.MinCost) // alice's hash: its cost is not checked
	s.Register("alice", "password1")
	var calls atomic.Int32
	var hashes []string
	s.compare = func(hash, password []byte) error {
		calls.Add(1)
		hashes = append(hashes, string(hash))
		return bcrypt.CompareHashAndPassword(hash, password)
	}
	for _, tc := range []struct{ user, pass string }{{"alice", "wrong-one"}, {"ghost", "wrong-one"}, {"alice", "password1"}} {
		before := calls.Load()
		_, err := s.CheckLogin(context.Background(), tc.user, tc.pass)
		if calls.Load()-before != 1 {
			t.Errorf("login %s/%s: %d bcrypt verifications, want 1", tc.user, tc.pass, calls.Load()-before)
		}
		if tc.pass == "wrong-one" && !errors.Is(err, ErrBadCredentials) {
			t.Errorf("login %s/%s: %v, want ErrBadCredentials", tc.user, tc.pass, err)
		}
	}
	if cost, err := bcrypt.Cost([]byte(hashes[1])); err != nil || cost != bcrypt.DefaultCost {
		t.Errorf("dummy hash cost %d (%v), want %d", cost, err, bcrypt.DefaultCost)
	}
	if hashes[0] == hashes[1] {
		t.Error("the unknown user was verified against a real account's hash")
	}
}

// TestSampleStoreHashCost checks SetHashCost: the hashes of new accounts
// and the dummy hash that an unknown user is verified against, made by
// Open, both have the cost set; a cost bcrypt refuses is the default.
func TestSampleStoreHashCost(t *testing.T) {
	s := New()
	s.SetHashCost(bcrypt.MinCost)
	if err := s.Open(filepath.Join(t.TempDir(), FileName)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	id, ok := s.Register("quick", "password1")
	if !ok {
		t.Fatal("Register failed")
	}
	u, err := s.UserByID(context.Background(), id)
	if err != nil || u == nil {
		t.Fatalf("UserByID = %+v, %v", u, err)
	}
	if cost, err := bcrypt.Cost([]byte(u.PasswordHash)); err != nil || cost != bcrypt.MinCost {
		t.Errorf("account hash cost %d (%v), want %d", cost, err, bcrypt.MinCost)
	}
	if cost, err := bcrypt.Cost(s.dummyHash()); err != nil || cost != bcrypt.MinCost {
		t.Errorf("dummy hash cost %d (%v), want %d", cost, err, bcrypt.MinCost)
	}
	if got, ok := s.Login("quick", "password1"); !ok || got != id {
		t.Errorf("Login = %d, %v", got, ok)
	}
	s.SetHashCost(bcrypt.MaxCost + 1)
	if got := s.hashCost(); got != bcrypt.DefaultCost {
		t.Errorf("cost %d taken as %d, want the default %d", bcrypt.MaxCost+1, got, bcrypt.DefaultCost)
	}
}

// TestSampleStoreNotes covers ownership: another account's note is
// invisible and untouchable, and deleting an account deletes its notes.
func TestSampleStoreNotes(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	a, _ := s.Register("alice", "password1")
	b, _ := s.Register("bob", "password1")
	n, err := s.CreateNote(ctx, a, "alice's", "secret")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Note(ctx, b, n.ID); !errors.Is(err, ErrNoteNotFound) {
		t.Errorf("bob reads alice's note: %v", err)
	}
	if _, err := s.UpdateNote(ctx, b, n.ID, "mine", "now"); !errors.Is(err, ErrNoteNotFound) {
		t.Errorf("bob updates alice's note: %v", err)
	}
	if err := s.DeleteNote(ctx, b, n.ID); !errors.Is(err, ErrNoteNotFound) {
		t.Errorf("bob deletes alice's note: %v", err)
	}
	if list, _ := s.Notes(ctx, b); len(list) != 0 {
		t.Errorf("bob lists %+v", list)
	}
	got, err := s.Note(ctx, a, n.ID)
	if err != nil || got.Title != "alice's" || got.Body != "secret" {
		t.Errorf("alice's note after bob: %+v, %v", got, err)
	}
	if _, err := s.CreateNote(ctx, 9999, "orphan", ""); err == nil {
		t.Error("a note for a missing account was created: foreign keys are off")
	}
	if err := s.DB().Exec("DELETE FROM users WHERE id = ?", a).Error; err != nil {
		t.Fatal(err)
	}
	var left int64
	s.DB().Raw("SELECT count(*) FROM notes WHERE user_id = ?", a).Scan(&left)
	if left != 0 {
		t.Errorf("%d notes outlive their account", left)
	}
}

// TestSampleStoreValidation covers the limits of both validators.
func TestSampleStoreValidation(t *testing.T) {
	tests := []struct {
		name string
		err  *ValidationError
		code string // "" for valid
	}{
		{"username 3", ValidateCredentials("abc", "12345678"), ""},
		{"username 64", ValidateCredentials(strings.Repeat("a", 64), "12345678"), ""},
		{"username 2", ValidateCredentials("ab", "12345678"), "invalid_username"},
		{"username 65", ValidateCredentials(strings.Repeat("a", 65), "12345678"), "invalid_username"},
		{"username slash", ValidateCredentials("a/b", "12345678"), "invalid_username"},
		{"username NUL", ValidateCredentials("ab\x00c", "12345678"), "invalid_username"},
		{"password 72", ValidateCredentials("abc", strings.Repeat("p", 72)), ""},
		{"password 73", ValidateCredentials("abc", strings.Repeat("p", 73)), "invalid_password"},
		{"password 7", ValidateCredentials("abc", "1234567"), "invalid_password"},
		{"password 4 runes 8 bytes", ValidateCredentials("abc", "éééé"), ""},
		{"title 1", ValidateNote("t", ""), ""},
		{"title 200 runes", ValidateNote(strings.Repeat("é", 200), ""), ""},
		{"title empty", ValidateNote("", "body"), "invalid_title"},
		{"title 201", ValidateNote(strings.Repeat("t", 201), ""), "invalid_title"},
		{"body 10000 runes", ValidateNote("t", strings.Repeat("é", 10000)), ""},
		{"body 10001", ValidateNote("t", strings.Repeat("b", 10001)), "invalid_body"},
		{"invalid UTF-8", ValidateNote("t", "\xff"), "invalid_body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			switch {
			case tt.code == "" && tt.err != nil:
				t.Errorf("unexpected %s: %s", tt.err.Code, tt.err.Message)
			case tt.code != "" && (tt.err == nil || tt.err.Code != tt.code):
				t.Errorf("got %+v, want code %s", tt.err, tt.code)
			}
		})
	}
}
