package host

import (
	"fmt"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// SignToken signs claims into a JSON Web Token (golang-jwt/jwt/v5) that
// the jwt alias verifies, for a handler that issues tokens (a log-in).
// key names the algorithm and where the key is, as the alias does:
//
//	"HS256,env=JWT_SECRET"          the secret in an environment variable (at least 32 bytes)
//	"RS256,file=/etc/app/rsa.key"   a PEM private key (PKCS #1 or #8) in a file
//	"EdDSA,env=JWT_ED25519_KEY"     a PEM Ed25519 private key (PKCS #8)
//
// so that one constant can name the key in both places, the alias adding
// its own arguments after it ("jwt:" + key + ",optional"). An HS256 alias
// and SignToken read the same secret; RS256 and EdDSA sign with the
// private key whose public half the alias reads. The key is read on each
// call, never from the source; a relative file name is taken from the
// working directory. claims is the token's payload: set "exp" (Unix
// seconds) for a token that expires, and "sub" for API.Username.
func SignToken(key string, claims map[string]any) (string, error) {
	alg, k, err := signingKey(key)
	if err != nil {
		return "", fmt.Errorf("zealgo: sign token: %w", err)
	}
	s, err := jwt.NewWithClaims(jwt.GetSigningMethod(alg), jwt.MapClaims(claims)).SignedString(k)
	if err != nil {
		return "", fmt.Errorf("zealgo: sign token: %w", err)
	}
	return s, nil
}

// signingKey reads the algorithm and the signing key that key names.
func signingKey(key string) (string, any, error) {
	args := strings.Split(key, ",")
	alg := strings.TrimSpace(args[0])
	material, from, err := readKey(args[1:], "", func(a, _, _ string) error {
		return fmt.Errorf("unknown argument %q: the key is <alg>,env=<VAR> or <alg>,file=<path>", a)
	})
	if err != nil {
		return "", nil, err
	}
	var k any
	switch alg {
	case "HS256":
		if len(material) < 32 {
			return "", nil, fmt.Errorf("an HS256 secret needs at least 32 bytes, the one in %s has %d", from, len(material))
		}
		k = material
	case "RS256":
		k, err = jwt.ParseRSAPrivateKeyFromPEM(material)
	case "EdDSA":
		k, err = jwt.ParseEdPrivateKeyFromPEM(material)
	default:
		return "", nil, fmt.Errorf("the algorithm %q is not HS256, RS256 or EdDSA", alg)
	}
	if err != nil {
		return "", nil, fmt.Errorf("the private key in %s: %w", from, err)
	}
	return alg, k, nil
}
