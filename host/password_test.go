package host_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// TestPasswordHash: HashPassword's hash verifies the password exactly as
// given (spaces count) and no other; an empty or malformed hash is no
// match, not even for the password of the hash CheckPassword then checks;
// a password over 72 bytes is refused; calls at once all finish and answer
// as alone. (Few bcrypt runs: each takes seconds under the race detector.)
func TestPasswordHash(t *testing.T) {
	t.Parallel() // seconds of bcrypt under -race: beside the tests that wait
	h, err := host.HashPassword(" s3cret <b> ")
	if err != nil || !strings.HasPrefix(h, "$2") {
		t.Fatalf("HashPassword: %q, %v", h, err)
	}
	for _, bad := range []string{"", "$2a$10$short"} {
		if host.CheckPassword(bad, "zealgo: no user has this password") {
			t.Errorf("the hash %q matched", bad)
		}
	}
	if _, err := host.HashPassword(strings.Repeat("x", host.PasswordMaxBytes+1)); err == nil || !strings.HasPrefix(err.Error(), "zealgo: hash password: ") {
		t.Errorf("a 73-byte password: %v", err)
	}
	// The checks of the good password and of another, made at once (on
	// two processors, one waits for its turn): each answers as alone.
	checks := []struct {
		pw   string
		want bool
	}{{" s3cret <b> ", true}, {"s3cret <b>", false}, {" s3cret <b> ", true}}
	got := make([]bool, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = host.CheckPassword(h, c.pw)
		}()
	}
	wg.Wait()
	for i, c := range checks {
		if got[i] != c.want {
			t.Errorf("CheckPassword(%q), made with others at once, = %v, want %v", c.pw, got[i], c.want)
		}
	}
}
