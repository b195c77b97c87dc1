package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zealgo/zealgo/internal/testutil"
)

// uuidFile imports a module of the application's go.mod that the stock
// binary carries no symbols for, and answers where it runs (kindFile):
// TestTieredServe serves it.
const uuidFile = "//go:build ignore\n\npackage main\n\nimport (\n\t\"reflect\"\n\n\t\"github.com/google/uuid\"\n" +
	"\t\"github.com/zealgo/zealgo/host\"\n)\n\ntype probe struct{}\n\n" +
	"var id = func(api *host.API) any {\n\tu := uuid.MustParse(\"6ba7b810-9dad-11d1-80b4-00c04fd430c8\")\n" +
	"\treturn map[string]any{\"v\": %s, \"ver\": int(u.Version()), \"pkg\": reflect.TypeOf(probe{}).PkgPath()}\n}\n"

// tryGet GETs url and returns its status and body.
func tryGet(url string) (int, string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), err
}

// TestStockJWTBcrypt: the stock binary, with no build (--tiered=false),
// serves interpreted a handler whose application package (lib/) signs
// and verifies a JWT with github.com/golang-jwt/jwt/v5 and hashes a
// password with golang.org/x/crypto/bcrypt, and a handler importing jwt
// itself.
func TestStockJWTBcrypt(t *testing.T) {
	app := filepath.Join(testutil.WriteTree(t, map[string]string{
		"app/go.mod": "module example.com/app\n\ngo 1.22\n",
		"app/lib/auth/auth.go": "package auth\n\nimport (\n\t\"github.com/golang-jwt/jwt/v5\"\n\t\"golang.org/x/crypto/bcrypt\"\n)\n\n" +
			"var key = []byte(\"a key of at least thirty-two bytes!\")\n\n" +
			"// Token signs a token for sub and returns its subject as verified.\n" +
			"func Token(sub string) (string, error) {\n" +
			"\ts, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{\"sub\": sub}).SignedString(key)\n" +
			"\tif err != nil {\n\t\treturn \"\", err\n\t}\n" +
			"\ttok, err := jwt.Parse(s, func(*jwt.Token) (any, error) { return key, nil }, jwt.WithValidMethods([]string{\"HS256\"}))\n" +
			"\tif err != nil {\n\t\treturn \"\", err\n\t}\n\treturn tok.Claims.GetSubject()\n}\n\n" +
			"// Hash hashes pw and checks it.\n" +
			"func Hash(pw string) bool {\n\th, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)\n" +
			"\treturn err == nil && bcrypt.CompareHashAndPassword(h, []byte(pw)) == nil && bcrypt.CompareHashAndPassword(h, []byte(\"x\")) != nil\n}\n",
		"app/api/login.go": head[:strings.Index(head, "import")] + "import (\n\t\"example.com/app/lib/auth\"\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
			"var login = func(api *host.API) (any, error) {\n\tsub, err := auth.Token(\"ada\")\n" +
			"\treturn map[string]any{\"sub\": sub, \"hash\": auth.Hash(\"secret\")}, err\n}\n",
		"app/api/claims.go": head[:strings.Index(head, "import")] + "import (\n\t\"github.com/golang-jwt/jwt/v5\"\n\t\"github.com/zealgo/zealgo/host\"\n)\n\n" +
			"var claims = func(api *host.API) any {\n\treturn jwt.RegisteredClaims{Subject: \"bob\"}\n}\n",
	}), "app")
	base, logs, _ := serveTier(t, app, nil, "--tiered=false")
	if code, _, body := fetch(t, "GET", base+"/api/login", "", ""); code != 200 || body != `{"hash":true,"sub":"ada"}` {
		t.Errorf("GET /api/login: %d %s\n%s", code, body, logs)
	}
	if code, _, body := fetch(t, "GET", base+"/api/claims", "", ""); code != 200 || body != `{"sub":"bob"}` {
		t.Errorf("GET /api/claims: %d %s\n%s", code, body, logs)
	}
}
