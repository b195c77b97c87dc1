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
// a password over 72 bytes is refused; calls at once all finish. (Few
// bcrypt runs: each takes seconds under the race detector.)
func TestPasswordHash(t *testing.T) {
	h, err := host.HashPassword(" s3cret <b> ")
	if err != nil || !strings.HasPrefix(h, "$2") {
		t.Fatalf("HashPassword: %q, %v", h, err)
	}
	for pw, want := range map[string]bool{" s3cret <b> ": true, "s3cret <b>": false} {
		if got := host.CheckPassword(h, pw); got != want {
			t.Errorf("CheckPassword(%q) = %v, want %v", pw, got, want)
		}
	}
	for _, bad := range []string{"", "$2a$10$short"} {
		if host.CheckPassword(bad, "zealgo: no user has this password") {
			t.Errorf("the hash %q matched", bad)
		}
	}
	if _, err := host.HashPassword(strings.Repeat("x", host.PasswordMaxBytes+1)); err == nil || !strings.HasPrefix(err.Error(), "zealgo: hash password: ") {
		t.Errorf("a 73-byte password: %v", err)
	}
	var wg sync.WaitGroup
	ok := make(chan bool, 3)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok <- host.CheckPassword(h, " s3cret <b> ")
		}()
	}
	wg.Wait()
	close(ok)
	for good := range ok {
		if !good {
			t.Error("a check made at the same time as others failed")
		}
	}
}
