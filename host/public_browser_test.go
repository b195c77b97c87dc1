package host_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/internal/testutil"
)

// chromiumPath is Debian's browser, installed by .ci/run.
// TestPublicBrowser loads the repository's sample pages in a real headless
// Chromium: the home page renders its template and the browser applies
// /css/style.css (a stylesheet sent with the wrong Content-Type under
// nosniff would be refused), /about/ lands on /about, and a missing page
// shows the HTML 404 page.
func TestPublicBrowser(t *testing.T) {
	chromiumPath := testutil.NeedProgram(t, "chromium", "apt-get install chromium")
	ta := newTestApp(t, nil, host.WithRoot(".."), host.WithDataDir(t.TempDir()))
	ctx := startChromium(t, chromiumPath)
	eval := func(url, expr string) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		v, err := chromedp.Run(sctx, chromedp.Evaluate[string](expr))
		if err != nil {
			t.Fatalf("%s: %s: %v", url, expr, err)
		}
		return v
	}
	for _, tc := range []struct{ path, expr, want string }{
		{"/", `document.title + " | " + document.querySelector("h1").textContent`, "zealgo | zealgo"},
		{"/", `getComputedStyle(document.body).backgroundColor`, "rgb(246, 248, 250)"},
		{"/", `document.styleSheets.length + " " + (document.styleSheets[0].cssRules.length > 5)`, "1 true"},
		{"/about/", `location.pathname + " | " + document.querySelector("h1").textContent`, "/about | About zealgo"},
		{"/no/such/page", `document.title`, "404 Not Found"},
	} {
		if got := eval(ta.srv.URL+tc.path, tc.expr); got != tc.want {
			t.Errorf("%s: %s = %q, want %q", tc.path, tc.expr, got, tc.want)
		}
	}
}

// startChromium starts a headless Chromium for the test, stopped at its
// end, and returns the context of its first tab.
func startChromium(t *testing.T, chromiumPath string) context.Context {
	t.Helper()
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath), chromedp.UserDataDir(t.TempDir()), chromedp.Headless, chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-dev-shm-usage", true))
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromiumPath, err)
	}
	return ctx
}
