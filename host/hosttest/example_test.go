package hosttest_test

import (
	"fmt"
	"net/http"
	"net/url"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/host/hosttest"
	"github.com/zealgo/zealgo/symbols"
)

// newGreeter builds the greeter application of testdata/greeter as its
// main would before calling host.Main: symbols, a provided value, a global
// middleware and the authentication hooks.
func newGreeter() *host.App {
	app := host.New()
	app.Symbols(symbols.Symbols)
	app.Provide(&url.URL{Scheme: "https", Host: "docs.example", Path: "/greeter"})
	app.Use(func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-App", "greeter")
			next.ServeHTTP(w, r)
		})
	})
	token := func(g *host.RequestContext) bool { return g.Request.Header.Get("X-Token") == "s3cret" }
	app.AuthChecker(token)
	app.UsernameProvider(func(g *host.RequestContext) (string, bool) { return "ada", token(g) })
	return app
}

// Check runs the archive testdata/greeter.txtar against the application
// in testdata/greeter. A test calls hosttest.Run (or RunDir) instead, which
// reports the failures through its *testing.T.
func Example() {
	res, err := hosttest.Check("testdata/greeter.txtar",
		hosttest.WithApp(newGreeter), hosttest.WithRoot("testdata/greeter"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, x := range res.Exchanges {
		fmt.Println(x.Request, "->", x.Status, x.Header.Get("X-App"))
	}
	fmt.Println(res.Exchanges[0].Body)
	fmt.Println("failures:", len(res.Failures))
	// Output:
	// GET /api/hello?name=Ada -> 200 greeter
	// GET /api/me -> 401 greeter
	// GET /api/me -> 200 greeter
	// DELETE /api/me -> 405 greeter
	// {"docs":"https://docs.example/greeter","hello":"Ada"}
	// failures: 0
}
