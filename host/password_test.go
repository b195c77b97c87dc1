package host_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/zealgo/zealgo/host"
)

// TestPasswordHash: HashPassword's hash verifies the password exactly as
// given (spaces and case count) and no other; an empty or malformed hash
// is no match; a password over 72 bytes is refused; concurrent calls all
// succeed.
func TestPasswordHash(t *testing.T) {
	h, err := host.HashPassword(" s3cret <b> ")
	if err != nil || !strings.HasPrefix(h, "$2") {
		t.Fatalf("HashPassword: %q, %v", h, err)
	}
	for pw, want := range map[string]bool{" s3cret <b> ": true, "s3cret <b>": false, " S3CRET <b> ": false, "": false} {
		if got := host.CheckPassword(h, pw); got != want {
			t.Errorf("CheckPassword(%q) = %v, want %v", pw, got, want)
		}
	}
	for _, bad := range []string{"", "not a hash", "$2a$10$short"} {
		if host.CheckPassword(bad, "") || host.CheckPassword(bad, "zealgo: no user has this password") {
			t.Errorf("the hash %q matched", bad)
		}
	}
	if _, err := host.HashPassword(strings.Repeat("x", host.PasswordMaxBytes+1)); err == nil || !strings.HasPrefix(err.Error(), "zealgo: hash password: ") {
		t.Errorf("a 73-byte password: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := host.HashPassword("p")
			if err == nil && !host.CheckPassword(h, "p") {
				err = errTestMismatch
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

type testError string

func (e testError) Error() string { return string(e) }

const errTestMismatch = testError("a concurrent hash did not verify")
