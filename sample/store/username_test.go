package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestSampleStoreUsernameCase: usernames are unique whatever their case
// and kept as typed; log-in takes the name as registered.
func TestSampleStoreUsernameCase(t *testing.T) {
	s := openTemp(t)
	ctx := context.Background()
	id, err := s.CreateAccount(ctx, "CaseUser", "password1")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"caseuser", "CASEUSER", "cASEuSER", "CaseUser"} {
		if got, err := s.CreateAccount(ctx, name, "password2"); !errors.Is(err, ErrUsernameTaken) || got != 0 {
			t.Errorf("CreateAccount(%q) = %d, %v; want ErrUsernameTaken", name, got, err)
		}
	}
	if other, err := s.CreateAccount(ctx, "CaseUser2", "password1"); err != nil || other == id {
		t.Errorf("a different name: %d, %v", other, err)
	}
	var names []string
	s.DB().Raw("SELECT username FROM users WHERE username LIKE 'caseuser%' ORDER BY id").Scan(&names)
	if strings.Join(names, ",") != "CaseUser,CaseUser2" {
		t.Errorf("stored names %q, want CaseUser, CaseUser2 as typed", names)
	}
	if got, ok := s.Login("CaseUser", "password1"); !ok || got != id {
		t.Errorf("Login as registered = %d, %v", got, ok)
	}
	if _, ok := s.Login("caseuser", "password1"); ok {
		t.Error("Login in another case succeeded; the name must be typed as registered")
	}
	// The database itself refuses a second spelling, whoever writes it.
	err = s.DB().Exec("INSERT INTO users (username, password_hash, created_at) VALUES ('CASEUSER', 'x', 1)").Error
	if err == nil || !strings.Contains(err.Error(), "UNIQUE") && !strings.Contains(err.Error(), "duplicated key") {
		t.Errorf("a raw insert of CASEUSER: %v, want a unique violation", err)
	}
	if dups := s.CaseDuplicates(); len(dups) != 0 {
		t.Errorf("CaseDuplicates = %q on a new database", dups)
	}
}

// TestSampleStoreUsernameCaseMigration opens a database made before the
// rule, holding two names that differ only in case: it opens with both
// accounts intact, each logging in by its own name, reports them, and
// refuses a third spelling; once one is renamed, the next Open makes the
// unique index.
func TestSampleStoreUsernameCaseMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	old, err := openQuick(path)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := old.Register("Legacy", "password1")
	second, _ := old.Register("Other", "password2")
	// Undo the rule as an older sample's database had it: no folded index,
	// and a second account spelled "legacy".
	for _, q := range []string{
		"DROP INDEX " + usernameIndex,
		"UPDATE users SET username = 'legacy' WHERE username = 'Other'",
	} {
		if err := old.DB().Exec(q).Error; err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	old.Close()

	s, err := openQuick(path)
	if err != nil {
		t.Fatalf("opening a database with case duplicates: %v", err)
	}
	if dups := s.CaseDuplicates(); len(dups) != 1 || (dups[0] != "Legacy, legacy" && dups[0] != "legacy, Legacy") {
		t.Errorf("CaseDuplicates = %q", dups)
	}
	if got, ok := s.Login("Legacy", "password1"); !ok || got != first {
		t.Errorf("Login(Legacy) = %d, %v; want %d", got, ok, first)
	}
	if got, ok := s.Login("legacy", "password2"); !ok || got != second {
		t.Errorf("Login(legacy) = %d, %v; want %d", got, ok, second)
	}
	if _, err := s.CreateAccount(context.Background(), "LEGACY", "password3"); !errors.Is(err, ErrUsernameTaken) {
		t.Errorf("a third spelling: %v, want ErrUsernameTaken", err)
	}
	if got := indexes(t, s); !slices.Contains(got, usernameLegacyIndex) || slices.Contains(got, usernameIndex) {
		t.Errorf("indexes %q: want the plain folded index only", got)
	}
	if err := s.DB().Exec("UPDATE users SET username = 'legacy2' WHERE id = ?", second).Error; err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, err = openQuick(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if dups := s.CaseDuplicates(); len(dups) != 0 {
		t.Errorf("CaseDuplicates = %q after the rename", dups)
	}
	if got := indexes(t, s); !slices.Contains(got, usernameIndex) || slices.Contains(got, usernameLegacyIndex) {
		t.Errorf("indexes %q: want the unique folded index only", got)
	}
}

// indexes returns the names of the users table's indexes.
func indexes(t *testing.T, s *Store) []string {
	t.Helper()
	var names []string
	if err := s.DB().Raw("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'users'").Scan(&names).Error; err != nil {
		t.Fatal(err)
	}
	return names
}
