// Package auth signs Conduit's tokens, HS256 JWTs with
// github.com/golang-jwt/jwt/v5, and hashes its passwords with
// golang.org/x/crypto/bcrypt. Handler files import it; `zealgo serve`
// interprets it from source with the symbol tables of both modules that
// the stock binary carries.
package auth

import (
	"errors"
	"os"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"
)

// SecretEnv names the environment variable holding the HS256 key, the
// one the handler files' jwt alias (middleware) verifies tokens with.
const SecretEnv = "CONDUIT_JWT_SECRET"

// tokenLife is how long a token is valid.
const tokenLife = 30 * 24 * time.Hour

// Token returns a signed token whose subject is the user's id.
func Token(id int64) (string, error) {
	key := os.Getenv(SecretEnv)
	if len(key) < 32 {
		return "", errors.New("conduit: " + SecretEnv + " must hold a key of at least 32 bytes")
	}
	claims := jwt.RegisteredClaims{
		Subject:   strconv.FormatInt(id, 10),
		IssuedAt:  jwt.NewNumericDate(time.Now()),
		ExpiresAt: jwt.NewNumericDate(time.Now().Add(tokenLife)),
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(key))
}

// HashPassword returns the bcrypt hash of password.
func HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// CheckPassword reports whether password is the one hash was made of. An
// empty hash (an unknown email) costs as much as a wrong password.
func CheckPassword(hash, password string) bool {
	if hash == "" {
		_, _ = bcrypt.GenerateFromPassword([]byte(password), bcrypt.DefaultCost)
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
}
