package host_test

import (
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/zealgo/zealgo/host"
)

// issueBody is a handler that signs a token for ?sub= with the key named
// by its ?key= argument, as a log-in handler does.
const issueBody = `tok, err := host.SignToken(api.String("key"), map[string]any{"sub": api.String("sub")})
	if err != nil {
		return map[string]any{"error": err.Error()}
	}
	return map[string]any{"token": tok}`

// TestSignToken: a handler file (interpreted) signs tokens with
// host.SignToken that the jwt alias verifies: HS256 with the secret of
// the alias's environment variable, RS256 and EdDSA with the private
// halves of the alias's public keys; the alias's claim reaches
// API.Username. A token signed with another key is refused.
func TestSignToken(t *testing.T) {
	k := newJWTKeys(t)
	t.Setenv("ZEALGO_TEST_SIGN_HS", string(k.hs)+"\n")
	rsKey := writePrivatePEM(t, filepath.Join(k.dir, "rsa.key"), k.rsa)
	edKey := writePrivatePEM(t, filepath.Join(k.dir, "ed.key"), k.ed)
	files := map[string]string{
		"api/issue.go": handlerFile("issue", issueBody),
		"api/hs/me.go": handlerFile("me", meBody, "jwt:HS256,env=ZEALGO_TEST_SIGN_HS"),
		"api/rs/me.go": handlerFile("me", meBody, "jwt:RS256,file="+filepath.Join(k.dir, "rsa.pem")),
		"api/ed/me.go": handlerFile("me", meBody, "jwt:EdDSA,file="+filepath.Join(k.dir, "ed.pem")),
	}
	ta := newTestAppWith(t, files, nil)
	for _, c := range []struct{ name, key, path string }{
		{"HS256", "HS256,env=ZEALGO_TEST_SIGN_HS", "/api/hs/me"},
		{"RS256", "RS256,file=" + rsKey, "/api/rs/me"},
		{"EdDSA", "EdDSA,file=" + edKey, "/api/ed/me"},
	} {
		_, body := do(t, nil, "GET", ta.srv.URL+"/api/issue?sub=jake&key="+c.key, nil)
		tok := strings.TrimSuffix(strings.TrimPrefix(body, `{"token":"`), `"}`)
		if strings.Contains(tok, `"`) || strings.Count(tok, ".") != 2 {
			t.Fatalf("%s: the handler did not sign: %s", c.name, body)
		}
		resp, me := do(t, nil, "GET", ta.srv.URL+c.path, nil, "Authorization", "Token "+tok)
		if resp.StatusCode != 200 || !strings.Contains(me, `"auth":true`) || !strings.Contains(me, `"user":"jake"`) {
			t.Errorf("%s: the alias refused the signed token: %d %s", c.name, resp.StatusCode, me)
		}
	}
	other := sign(t, jwt.SigningMethodHS256, []byte("another secret of at least 32 bytes!!"), jwt.MapClaims{"sub": "jake"})
	if resp, body := do(t, nil, "GET", ta.srv.URL+"/api/hs/me", nil, "Authorization", "Token "+other); resp.StatusCode != 401 {
		t.Errorf("a token of another key: %d %s", resp.StatusCode, body)
	}
}

// TestSignTokenKeys: a key SignToken cannot use is an error that says
// why, never a token.
func TestSignTokenKeys(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("too short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZEALGO_TEST_SIGN_PUBLIC", string(newJWTKeys(t).rsaPEM))
	for key, want := range map[string]string{
		"HS256":              "exactly one of env=<VAR> or file=<path>",
		"HS256,env=A,file=b": "exactly one of env=<VAR> or file=<path>",
		"HS256,secret=0123456789abcdef0123456789abcdef": `unknown argument "secret=`,
		"HS256,env=ZEALGO_TEST_SIGN_UNSET":              "the environment variable ZEALGO_TEST_SIGN_UNSET is not set",
		"HS256,file=" + short:                           "at least 32 bytes",
		"HS256,file=" + filepath.Join(dir, "none"):      "the key file",
		"none,file=" + short:                            `the algorithm "none" is not HS256, RS256 or EdDSA`,
		"RS256,env=ZEALGO_TEST_SIGN_PUBLIC":             "the private key in the environment variable ZEALGO_TEST_SIGN_PUBLIC",
		"EdDSA,env=ZEALGO_TEST_SIGN_PUBLIC":             "the private key in the environment variable ZEALGO_TEST_SIGN_PUBLIC",
	} {
		tok, err := host.SignToken(key, map[string]any{"sub": "jake"})
		if err == nil || tok != "" || !strings.HasPrefix(err.Error(), "zealgo: sign token: ") || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %q, %v, want an error with %q", key, tok, err, want)
		}
	}
}

func writePrivatePEM(t *testing.T, path string, key any) string {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
