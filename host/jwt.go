package host

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/golang-jwt/jwt/v5"
)

// The jwt alias verifies a signed token (golang-jwt/jwt/v5) on each
// request and hands its claims to the handler and the auth hooks:
//
//	jwt:<alg>,env=<VAR>|file=<path>[,claim=<name>][,issuer=<iss>][,audience=<aud>][,optional]
//
// alg is HS256, RS256 or EdDSA, and a token signed otherwise is refused
// (no "none", no algorithm confusion). The key comes from the environment
// variable VAR or the file at path (relative to the application root),
// never from the source: an HS256
// secret of at least 32 bytes, or a PEM public key (or certificate) for
// RS256 and EdDSA. It is read when the alias is instantiated (at start-up
// for UseAlias and When). claim names the claim API.Username returns
// ("sub" by default); issuer and audience, when given, must match the
// token's iss and aud. A request without a token is refused with 401
// unless optional is given, when it goes on unauthenticated; a token
// that does not verify (bad signature, expired, not yet valid, another
// algorithm, malformed) is always refused with 401 unauthorized and a
// WWW-Authenticate header.
//
// The token is read by API.BearerToken. Past the alias, API.Claims and
// RequestContext.Claims return its claims; with no AuthChecker registered
// API.IsAuthenticated is true for a verified token, and with no
// UsernameProvider API.Username returns its claim. Registered hooks
// decide instead, and read RequestContext.Claims themselves.

// tokenInfo is what the jwt alias verified for a request.
type tokenInfo struct {
	claims jwt.MapClaims
	user   string // the claim the alias names for Username, if a string
}

// jwtConfig is a jwt alias's arguments.
type jwtConfig struct {
	alg      string
	key      any
	claim    string
	issuer   string
	audience string
	optional bool
}

func aliasJWT(root string, args ...string) (func(http.Handler) http.Handler, error) {
	cfg, err := parseJWTArgs(args, root)
	if err != nil {
		return nil, err
	}
	opts := []jwt.ParserOption{jwt.WithValidMethods([]string{cfg.alg})}
	if cfg.issuer != "" {
		opts = append(opts, jwt.WithIssuer(cfg.issuer))
	}
	if cfg.audience != "" {
		opts = append(opts, jwt.WithAudience(cfg.audience))
	}
	parser := jwt.NewParser(opts...)
	keyFunc := func(*jwt.Token) (any, error) { return cfg.key, nil }
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, ok := bearerToken(r)
			if !ok {
				if cfg.optional {
					next.ServeHTTP(w, r)
					return
				}
				tokenRefused(w, r, "", "this endpoint needs a token: send Authorization: Bearer <token>")
				return
			}
			claims := jwt.MapClaims{}
			if _, err := parser.ParseWithClaims(raw, claims, keyFunc); err != nil {
				tokenRefused(w, r, "invalid_token", "the token does not verify: "+tokenProblem(err))
				return
			}
			if g := contextOf(r); g != nil {
				user, _ := claims[cfg.claim].(string)
				g.token = &tokenInfo{claims: claims, user: user}
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// parseJWTArgs reads the arguments of the jwt alias and its key; a
// relative file name is under root.
func parseJWTArgs(args []string, root string) (*jwtConfig, error) {
	if len(args) == 0 {
		return nil, errors.New("jwt takes an algorithm (HS256, RS256 or EdDSA) and env=<VAR> or file=<path>")
	}
	cfg := &jwtConfig{alg: args[0], claim: "sub"}
	material, from, err := readKey(args[1:], root, func(a, k, v string) error {
		switch k {
		case "claim":
			cfg.claim = v
		case "issuer":
			cfg.issuer = v
		case "audience":
			cfg.audience = v
		case "optional":
			cfg.optional = true
		default:
			return fmt.Errorf("jwt: unknown argument %q (env=, file=, claim=, issuer=, audience=, optional)", a)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if cfg.key, err = parseJWTKey(cfg.alg, material); err != nil {
		return nil, fmt.Errorf("jwt: the key in %s: %w", from, err)
	}
	return cfg, nil
}

// readKey reads the key that the arguments env=<VAR> and file=<path>
// among args name (keyMaterial), for the jwt alias and for signing
// (signingKey, jwtsign.go): a relative file is under root unless root is
// "". Every other argument a, as k=v, goes to other, whose error ends the
// reading.
func readKey(args []string, root string, other func(a, k, v string) error) ([]byte, string, error) {
	var env, file string
	for _, a := range args {
		k, v, _ := strings.Cut(strings.TrimSpace(a), "=")
		switch k {
		case "env":
			env = v
		case "file":
			file = v
			if file != "" && root != "" && !filepath.IsAbs(file) {
				file = filepath.Join(root, file)
			}
		default:
			if err := other(a, k, v); err != nil {
				return nil, "", err
			}
		}
	}
	return keyMaterial(env, file)
}

// keyMaterial reads the key from the environment variable env or the
// file, exactly one of which is set, without a final line break.
func keyMaterial(env, file string) ([]byte, string, error) {
	if (env == "") == (file == "") {
		return nil, "", errors.New("jwt: give the key as exactly one of env=<VAR> or file=<path>")
	}
	if env != "" {
		v := os.Getenv(env)
		if v == "" {
			return nil, "", fmt.Errorf("jwt: the environment variable %s is not set", env)
		}
		return []byte(strings.TrimRight(v, "\r\n")), "the environment variable " + env, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, "", fmt.Errorf("jwt: the key file: %w", err)
	}
	return []byte(strings.TrimRight(string(b), "\r\n")), file, nil
}

// parseJWTKey turns the key material into the key that verifies alg.
func parseJWTKey(alg string, b []byte) (any, error) {
	switch alg {
	case "HS256":
		if len(b) < 32 {
			return nil, fmt.Errorf("an HS256 secret needs at least 32 bytes, this one has %d", len(b))
		}
		return b, nil
	case "RS256":
		return jwt.ParseRSAPublicKeyFromPEM(b)
	case "EdDSA":
		return jwt.ParseEdPublicKeyFromPEM(b)
	}
	return nil, fmt.Errorf("the algorithm %q is not HS256, RS256 or EdDSA", alg)
}

// tokenProblem words why a token did not verify, without echoing it.
func tokenProblem(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "it has expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet), errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return "it is not valid yet"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid):
		return "its signature is invalid, or it is signed with another algorithm"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "it is malformed"
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "its issuer is not the expected one"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "its audience is not the expected one"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "it lacks a claim this endpoint requires (iss or aud)"
	case errors.Is(err, jwt.ErrTokenUnverifiable):
		return "it is signed with another algorithm"
	}
	return "its claims are invalid"
}

// tokenRefused answers 401 unauthorized with a WWW-Authenticate header
// (RFC 6750).
func tokenRefused(w http.ResponseWriter, r *http.Request, code, hint string) {
	challenge := `Bearer realm="zealgo"`
	if code != "" {
		challenge += `, error="` + code + `"`
	}
	e := &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Hint: hint,
		Header: http.Header{"Www-Authenticate": {challenge}}}
	writeError(w, r, e)
}

// bearerToken returns the credentials of the request's Authorization
// header when its scheme is Bearer or Token.
func bearerToken(r *http.Request) (string, bool) {
	scheme, tok, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") && !strings.EqualFold(scheme, "Token") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// BearerToken returns the token of the request's Authorization header,
// "Authorization: Bearer <token>" (RFC 6750; the scheme in any case, and
// "Token <token>", which RealWorld clients send), and whether there is
// one. It does not verify it: the jwt alias does (see MiddlewareAlias).
func (a *API) BearerToken() (string, bool) { return bearerToken(a.r) }

// Claims returns the claims of the token the jwt alias verified for this
// request, or nil when none was. The map is the token's JSON payload:
// numbers are float64.
func (a *API) Claims() map[string]any { return tokenClaims(a.r) }

// Claims returns the claims of the token the jwt alias verified for the
// request, or nil when none was, for the auth hooks.
func (g *RequestContext) Claims() map[string]any {
	if g.token == nil {
		return nil
	}
	return g.token.claims
}

// tokenClaims returns the verified claims of r without making its
// RequestContext.
func tokenClaims(r *http.Request) map[string]any {
	if t := tokenOf(r); t != nil {
		return t.claims
	}
	return nil
}

func tokenOf(r *http.Request) *tokenInfo {
	if st := stateOf(r); st != nil && st.g != nil {
		return st.g.token
	}
	return nil
}

func tokenUser(t *tokenInfo) string {
	if t == nil {
		return ""
	}
	return t.user
}
