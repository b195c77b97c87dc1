package host_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/zealgo/zealgo/host"
)

// meBody reports what a handler sees of the token.
const meBody = `tok, has := api.BearerToken()
	user, named := api.Username()
	return map[string]any{"auth": api.IsAuthenticated(), "admin": api.IsAdmin(), "user": user, "named": named,
		"claims": api.Claims(), "bearer": has, "len": len(tok)}`

// jwtKeys are the keys of TestJWTAlias, the public ones in PEM files.
type jwtKeys struct {
	hs     []byte
	rsa    *rsa.PrivateKey
	rsaPEM []byte
	ed     ed25519.PrivateKey
	edPEM  []byte
	dir    string
}

func newJWTKeys(t *testing.T) *jwtKeys {
	t.Helper()
	k := &jwtKeys{hs: []byte("0123456789abcdef0123456789abcdef-hs256"), dir: t.TempDir()}
	var err error
	if k.rsa, err = rsa.GenerateKey(rand.Reader, 2048); err != nil {
		t.Fatal(err)
	}
	_, k.ed, err = ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k.rsaPEM = writePublicPEM(t, filepath.Join(k.dir, "rsa.pem"), &k.rsa.PublicKey)
	k.edPEM = writePublicPEM(t, filepath.Join(k.dir, "ed.pem"), k.ed.Public())
	return k
}

func writePublicPEM(t *testing.T, path string, pub any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	b := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return b
}

func sign(t *testing.T, m jwt.SigningMethod, key any, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, claims).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestJWTAlias: the jwt alias lets a request through with a token signed
// by its key and algorithm (HS256 from an environment variable, RS256 and
// EdDSA from PEM files, absolute or under the root), whose claims the handler reads (API.Claims), the
// auth hooks read (RequestContext.Claims: here the admin checker) and
// that make API.IsAuthenticated true and API.Username its claim when no
// hook decides; it answers 401 with WWW-Authenticate to a missing,
// expired, not yet valid, wrongly signed, "none" or other-algorithm token
// (an HS256 token keyed with the RS256 public key included), and to a
// token of another issuer; optional lets a request without a token in.
func TestJWTAlias(t *testing.T) {
	k := newJWTKeys(t)
	t.Setenv("ZEALGO_TEST_JWT_HS", string(k.hs)+"\n")
	files := map[string]string{}
	for _, d := range []string{"hs", "rs", "ed", "opt"} {
		files["api/"+d+"/me.go"] = handlerFile("me", meBody)
	}
	files["api/file/me.go"] = handlerFile("me", meBody, "jwt:EdDSA,file=keys/ed.pem")
	files["keys/ed.pem"] = string(k.edPEM)
	ta := newTestAppWith(t, files, func(a *host.App) {
		a.When("/api/hs", "jwt:HS256,env=ZEALGO_TEST_JWT_HS")
		a.When("/api/rs", "jwt:RS256,file="+filepath.Join(k.dir, "rsa.pem"))
		a.When("/api/ed", "jwt:EdDSA,file="+filepath.Join(k.dir, "ed.pem")+",claim=name")
		a.When("/api/opt", "jwt:HS256,env=ZEALGO_TEST_JWT_HS,optional,issuer=zealgo-test")
		a.AdminChecker(func(g *host.RequestContext) bool { return g.Claims()["role"] == "admin" })
	})
	future, past := time.Now().Add(time.Hour).Unix(), time.Now().Add(-time.Hour).Unix()
	ok := jwt.MapClaims{"sub": "jake", "name": "Jake", "role": "admin", "exp": future}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, ok).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path, auth string
		status           int
		want             string
	}{
		{"HS256", "/api/hs/me", "Bearer " + sign(t, jwt.SigningMethodHS256, k.hs, ok), 200,
			`"admin":true,"auth":true,"bearer":true,"claims":{"exp":` + itoa(int(future)) + `,"name":"Jake","role":"admin","sub":"jake"},"len":`},
		{"HS256, Token scheme", "/api/hs/me", "Token " + sign(t, jwt.SigningMethodHS256, k.hs, jwt.MapClaims{"sub": "ann"}), 200, `"named":true,"user":"ann"`},
		{"RS256", "/api/rs/me", "bearer " + sign(t, jwt.SigningMethodRS256, k.rsa, ok), 200, `"auth":true`},
		{"EdDSA, claim=name", "/api/ed/me", "Bearer " + sign(t, jwt.SigningMethodEdDSA, k.ed, ok), 200, `"named":true,"user":"Jake"`},
		{"EdDSA, a handler file's list, the key under the root", "/api/file/me", "Bearer " + sign(t, jwt.SigningMethodEdDSA, k.ed, ok), 200, `"named":true,"user":"jake"`},
		{"handler file's list, no token", "/api/file/me", "", 401, `"error":"unauthorized"`},
		{"no token", "/api/hs/me", "", 401, `{"error":"unauthorized","hint":"this endpoint needs a token: send Authorization: Bearer \u003ctoken\u003e"}`},
		{"basic credentials", "/api/hs/me", "Basic amFrZTpqYWtl", 401, `"error":"unauthorized"`},
		{"expired", "/api/hs/me", "Bearer " + sign(t, jwt.SigningMethodHS256, k.hs, jwt.MapClaims{"sub": "jake", "exp": past}), 401, "it has expired"},
		{"not yet valid", "/api/hs/me", "Bearer " + sign(t, jwt.SigningMethodHS256, k.hs, jwt.MapClaims{"sub": "jake", "nbf": future}), 401, "it is not valid yet"},
		{"wrong key", "/api/hs/me", "Bearer " + sign(t, jwt.SigningMethodHS256, []byte("another secret of at least 32 bytes!!"), ok), 401, "signature is invalid"},
		{"none", "/api/hs/me", "Bearer " + none, 401, `"error":"unauthorized"`},
		{"RS256 token to HS256", "/api/hs/me", "Bearer " + sign(t, jwt.SigningMethodRS256, k.rsa, ok), 401, `"error":"unauthorized"`},
		{"HS256 keyed with the RSA public key", "/api/rs/me", "Bearer " + sign(t, jwt.SigningMethodHS256, k.rsaPEM, ok), 401, `"error":"unauthorized"`},
		{"HS384 to HS256", "/api/hs/me", "Bearer " + sign(t, jwt.SigningMethodHS384, k.hs, ok), 401, `"error":"unauthorized"`},
		{"malformed", "/api/hs/me", "Bearer not.a.token", 401, "it is malformed"},
		{"optional, none sent", "/api/opt/me", "", 200, `"admin":false,"auth":false,"bearer":false,"claims":null,"len":0,"named":false,"user":""`},
		{"optional, wrong issuer", "/api/opt/me", "Bearer " + sign(t, jwt.SigningMethodHS256, k.hs, ok), 401, "it lacks a claim this endpoint requires (iss or aud)"},
		{"wrong issuer", "/api/opt/me", "Bearer " + sign(t, jwt.SigningMethodHS256, k.hs, jwt.MapClaims{"iss": "other"}), 401, "its issuer is not the expected one"},
		{"optional, right issuer", "/api/opt/me", "Bearer " + sign(t, jwt.SigningMethodHS256, k.hs, jwt.MapClaims{"sub": "x", "iss": "zealgo-test"}), 200, `"auth":true`},
	}
	for _, c := range cases {
		hdr := []string{}
		if c.auth != "" {
			hdr = []string{"Authorization", c.auth}
		}
		resp, body := do(t, nil, "GET", ta.srv.URL+c.path, nil, hdr...)
		if resp.StatusCode != c.status || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %d with %s", c.name, resp.StatusCode, body, c.status, c.want)
		}
		if c.status == 401 && !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer ") {
			t.Errorf("%s: WWW-Authenticate %q", c.name, resp.Header.Get("WWW-Authenticate"))
		}
		var m map[string]any
		if json.Unmarshal([]byte(body), &m) != nil {
			t.Errorf("%s: the body is not JSON: %s", c.name, body)
		}
	}
}

// TestJWTAliasArguments: a jwt alias without a usable key or algorithm
// stops the application at start-up with an error that says why; the
// key never comes from the alias's own text.
func TestJWTAliasArguments(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("too short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ZEALGO_TEST_JWT_BAD_PEM", "not a key")
	for spec, want := range map[string]string{
		"jwt":       "jwt takes an algorithm",
		"jwt:HS256": "exactly one of env=<VAR> or file=<path>",
		"jwt:HS256,key=0123456789abcdef0123456789abcdef": `unknown argument "key=`,
		"jwt:HS256,env=ZEALGO_TEST_JWT_UNSET":            "the environment variable ZEALGO_TEST_JWT_UNSET is not set",
		"jwt:HS256,file=" + short:                        "at least 32 bytes, this one has 9",
		"jwt:HS256,file=" + filepath.Join(dir, "no"):     "the key file",
		"jwt:none,file=" + short:                         `the algorithm "none" is not HS256, RS256 or EdDSA`,
		"jwt:RS256,env=ZEALGO_TEST_JWT_BAD_PEM":          "the key in the environment variable ZEALGO_TEST_JWT_BAD_PEM",
		"jwt:EdDSA,env=ZEALGO_TEST_JWT_BAD_PEM":          "the key in the environment variable ZEALGO_TEST_JWT_BAD_PEM",
	} {
		app := host.New(host.WithRoot(t.TempDir()), host.WithLogOutput(io.Discard, slog.LevelError))
		app.UseAlias(spec)
		_, err := app.Handler()
		app.Close()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", spec, err, want)
		}
	}
}
