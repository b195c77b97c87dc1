package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zealgo/zealgo/internal/testutil"
)

// chromium is Debian's browser, installed by .ci/run.
// TestSampleBrowser drives a real headless Chromium through the pages, with
// no JavaScript of the application's: register through the form, land on
// the notes page, add a note, log out, log in again and see the note; a
// wrong password shows the auth-error paragraph.
func TestSampleBrowser(t *testing.T) {
	chromium := testutil.NeedProgram(t, "chromium", "apt-get install chromium")
	srv := newSampleServer(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1000, 800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancelCtx := chromedp.NewContext(actx)
	defer cancelCtx()

	// Start the browser on the context without a deadline, then bound
	// every step.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", chromium, err)
	}
	shots := os.Getenv("ZEALGO_SCREENSHOTS") // a directory to keep screenshots in
	step := func(name string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		if err := chromedp.Do(sctx, steps...); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if shots != "" {
			if png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100)); err == nil {
				_ = os.WriteFile(filepath.Join(shots, "sample-"+strings.ReplaceAll(name, " ", "-")+".png"), png, 0o644)
			}
		}
	}
	get := func(a chromedp.Action[string]) string {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		v, err := chromedp.Run(sctx, a)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	wantPath := func(p string) {
		t.Helper()
		if loc := get(chromedp.Location()); !strings.HasSuffix(loc, p) {
			t.Fatalf("at %s, want %s", loc, p)
		}
	}
	css := func(s string) chromedp.CSS { return chromedp.CSS(s) }

	step("log-in page",
		chromedp.Navigate(srv.URL+"/learn/"),
		chromedp.WaitVisible(css("#register-form")),
	)
	step("register",
		chromedp.SendKeys(css("#register-username"), "browser_user"),
		chromedp.SendKeys(css("#register-password"), "browser-pass-1"),
		chromedp.Click(css("#register-form button[type=submit]")),
		chromedp.WaitVisible(css("#add-note")),
	)
	wantPath("/learn/notes")
	if who := get(chromedp.Text(css("#who"))); who != "browser_user" {
		t.Errorf("logged in as %q", who)
	}
	step("add a note",
		chromedp.SendKeys(css("#note-title"), "Milk & eggs"),
		chromedp.SendKeys(css("#note-body"), "two dozen"),
		chromedp.Click(css("#add-note button[type=submit]")),
		chromedp.WaitVisible(css(".note-list .note-title")),
	)
	if text := get(chromedp.Text(css(".note-list"))); !strings.Contains(text, "Milk & eggs") || !strings.Contains(text, "two dozen") {
		t.Errorf("the notes page shows %q", text)
	}
	step("log out",
		chromedp.Click(css("#logout button")),
		chromedp.WaitVisible(css("#login")),
	)
	wantPath("/learn/")
	step("notes page when logged out",
		chromedp.Navigate(srv.URL+"/learn/notes"),
		chromedp.WaitVisible(css("#login")),
	)
	wantPath("/learn/")
	step("log in",
		chromedp.SendKeys(css("#login-username"), "browser_user"),
		chromedp.SendKeys(css("#login-password"), "browser-pass-1"),
		chromedp.Click(css("#login button[type=submit]")),
		chromedp.WaitVisible(css(".note-list .note-title")),
	)
	wantPath("/learn/notes")
	if text := get(chromedp.Text(css(".note-list"))); !strings.Contains(text, "Milk & eggs") {
		t.Errorf("after logging in again the notes page shows %q", text)
	}
	step("log out again",
		chromedp.Click(css("#logout button")),
		chromedp.WaitVisible(css("#login")),
	)
	step("wrong password",
		chromedp.SendKeys(css("#login-username"), "browser_user"),
		chromedp.SendKeys(css("#login-password"), "not-the-password"),
		chromedp.Click(css("#login button[type=submit]")),
		chromedp.WaitVisible(css("p.auth-error")),
	)
	if text := get(chromedp.Text(css("p.auth-error"))); text != "Wrong username or password." {
		t.Errorf("auth-error paragraph says %q", text)
	}
	wantPath("/api/learn/login")
}
