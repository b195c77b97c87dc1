package host

import (
	"fmt"
	"runtime"

	"golang.org/x/crypto/bcrypt"
)

// PasswordMaxBytes is the longest password HashPassword accepts: bcrypt
// reads no more.
const PasswordMaxBytes = 72

// passwordSlots bounds how many bcrypt computations run at once (one per
// processor): each takes tens of milliseconds of CPU, and a burst of
// log-ins must not starve every other request.
var passwordSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// dummyHash is a bcrypt hash (of a password nobody is given, at the
// default cost) that CheckPassword verifies when it is given no valid
// hash, so that an unknown user costs what a wrong password does.
const dummyHash = "$2a$10$56.Rxx1/maliWCuq8yuA2.kX0IYzUC5GnBqA01ydGon126mNrzo6."

// HashPassword returns the bcrypt hash (golang.org/x/crypto/bcrypt, the
// default cost) of password, to store instead of the password. The
// password is taken as given, not trimmed; one longer than
// PasswordMaxBytes is refused with an error. At most one hash per
// processor is computed at a time; other calls wait their turn.
func HashPassword(password string) (string, error) {
	if len(password) > PasswordMaxBytes {
		return "", fmt.Errorf("zealgo: hash password: %w (at most %d bytes)", bcrypt.ErrPasswordTooLong, PasswordMaxBytes)
	}
	passwordSlots <- struct{}{}
	defer func() { <-passwordSlots }()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", fmt.Errorf("zealgo: hash password: %w", err)
	}
	return string(h), nil
}

// CheckPassword reports whether password matches hash, a hash
// HashPassword returned. An empty or malformed hash (a user that does not
// exist: pass "") is no match, found in the time a wrong password takes,
// so that the answer does not tell whether the user exists. It shares
// HashPassword's bound on concurrent computations.
func CheckPassword(hash, password string) bool {
	h := []byte(hash)
	if _, err := bcrypt.Cost(h); err != nil {
		h = []byte(dummyHash)
		hash = ""
	}
	passwordSlots <- struct{}{}
	defer func() { <-passwordSlots }()
	return bcrypt.CompareHashAndPassword(h, []byte(password)) == nil && hash != ""
}
