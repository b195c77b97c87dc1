package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// TestSampleCrossSiteLoginBrowser: a page on another site (127.0.0.2)
// that auto-submits a log-in form to the application (127.0.0.1) with the
// attacker's credentials leaves the victim's real browser without a
// session: the cross-origin protection refuses the POST (issue 14,
// failure 5). The same attack against the application with the protection
// turned off (TrustedOrigins "*") logs the victim in as the attacker,
// which shows that SameSite=Lax alone does not stop it and that the test
// can see an attack that works.
func TestSampleCrossSiteLoginBrowser(t *testing.T) {
	testutil.NeedProgram(t, "chromium", "apt-get install chromium")
	protected := newSampleServer(t)
	unprotected := newSampleServer(t, host.WithConfig(func(c *host.Config) { c.TrustedOrigins = []string{"*"} }))
	for _, srv := range []*sampleServer{protected, unprotected} {
		srv.client(t).register("attacker", "attacker-pass-1")
	}
	attacker := attackerSite(t, protected.URL, unprotected.URL)

	for _, tc := range []struct {
		name     string
		app      *sampleServer
		path     string
		loggedIn bool
	}{
		{"protected", protected, "/protected", false},
		{"protection off", unprotected, "/unprotected", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := newBrowser(t).ctx
			run := func(what string, a chromedp.Action[chromedp.Void]) {
				t.Helper()
				sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				if err := chromedp.Do(sctx, a); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			run("visit the attacker's page", chromedp.Navigate(attacker+tc.path))
			sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			// The log-in answers 403, or 303 to the notes page when it works.
			if _, err := chromedp.Run(sctx, chromedp.Poll[bool](fmt.Sprintf(
				`location.href.startsWith(%q) && document.readyState === "complete"`, tc.app.URL+"/"))); err != nil {
				t.Fatalf("the form did not post itself to the application: %v", err)
			}
			status, err := chromedp.Run(sctx, chromedp.Evaluate[int](
				`fetch("/api/learn/notes", {headers: {Accept: "application/json"}}).then(r => r.status)`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Fatal(err)
			}
			if got := status == http.StatusOK; got != tc.loggedIn {
				t.Errorf("the victim's browser is logged in: %v (notes answer %d), want %v", got, status, tc.loggedIn)
			}
			if !tc.loggedIn {
				body, err := chromedp.Run(sctx, chromedp.Evaluate[string](`document.body.innerText`))
				if err != nil || !strings.Contains(body, "cross_origin_request") {
					t.Errorf("the refused log-in shows %q (%v)", body, err)
				}
			}
		})
	}
}

// attackerSite serves, on 127.0.0.2 (another site than 127.0.0.1), a page
// per target that posts a log-in form with the attacker's credentials as
// soon as it loads, and returns its URL.
func attackerSite(t *testing.T, protected, unprotected string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no second loopback address for the attacker's site: %v", err)
	}
	page := func(target string) string {
		return `<!doctype html><title>free prize</title>
<form id="f" method="post" action="` + target + `/api/learn/login">
<input name="username" value="attacker"><input name="password" value="attacker-pass-1"></form>
<script>document.getElementById("f").submit()</script>`
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/protected", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page(protected)) })
	mux.HandleFunc("/unprotected", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page(unprotected)) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}
