package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/zealgo/zealgo/internal/testutil"
)

// browser is a headless Chromium (Debian's, installed by .ci/run) driven
// through chromedp, with a screenshot after every step in shots when they
// are kept.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string // $ZEALGO_SCREENSHOTS, else the test's artifact directory; "" when none is kept
}

// screenshotDir returns where t's screenshots are kept: $ZEALGO_SCREENSHOTS,
// else, under go test -artifacts, the test's artifact directory; else ""
// and none is taken (a full-page PNG after every step, encoded by Chromium
// and decoded under -race, only to land in an artifact directory that
// go test removes without -artifacts). The screenshots check nothing.
func screenshotDir(t *testing.T) string {
	if dir := os.Getenv("ZEALGO_SCREENSHOTS"); dir != "" {
		return dir
	}
	if f := flag.Lookup("test.artifacts"); f != nil && f.Value.String() == "true" {
		return t.ArtifactDir()
	}
	return ""
}

// newBrowser opens, for the test, a tab of the package's Chromium
// (sharedChromium) in a browser context of its own (cookies, storage and
// cache its own, as in a fresh browser profile); both close with the test.
func newBrowser(t *testing.T) *browser {
	t.Helper()
	ctx, cancel := chromedp.NewContext(sharedChromium(t), chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// Open the tab on the context without a deadline, then bound every
	// step.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return &browser{t: t, ctx: ctx, shots: screenshotDir(t)}
}

// chromium is the headless Chromium the package's browser tests share:
// started by the first that asks, stopped by TestMain (stopChromium). One
// start instead of one a test: each start costs Chromium's own start-up
// and a profile written to disk.
var chromium struct {
	once sync.Once
	ctx  context.Context // the first tab's, which holds the browser
	stop func()
	err  error
}

// sharedChromium returns the context of chromium, started if it is not.
func sharedChromium(t *testing.T) context.Context {
	t.Helper()
	exe := testutil.NeedProgram(t, "chromium", "apt-get install chromium")
	chromium.once.Do(func() {
		opts := []chromedp.ExecAllocatorOption{
			chromedp.ExecPath(exe),
			chromedp.UserDataDir(filepath.Join(buildDir, "chromium")),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			// A tab in the background runs on (TestSampleLiveNotes has two).
			chromedp.Flag("disable-background-timer-throttling", true),
			chromedp.Flag("disable-backgrounding-occluded-windows", true),
			chromedp.Flag("disable-renderer-backgrounding", true),
			chromedp.WindowSize(1000, 800),
		}
		actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelCtx := chromedp.NewContext(actx)
		chromium.ctx, chromium.stop = ctx, func() { cancelCtx(); cancelAlloc() }
		if err := chromedp.Do(ctx); err != nil {
			chromium.err = fmt.Errorf("starting %s: %w", exe, err)
		}
	})
	if chromium.err != nil {
		t.Fatal(chromium.err)
	}
	return chromium.ctx
}

// stopChromium stops chromium if a test started it.
func stopChromium() {
	if chromium.stop != nil {
		chromium.stop()
	}
}

// step runs steps within 20 s, then saves a screenshot of the whole page
// as sample-<name>.png if screenshots are kept (screenshotDir).
func (b *browser) step(name string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(sctx, steps...); err != nil {
		b.t.Fatalf("%s: %v", name, err)
	}
	if b.shots == "" {
		return
	}
	if png, err := chromedp.Run(sctx, chromedp.FullScreenshot(100)); err == nil {
		_ = os.WriteFile(filepath.Join(b.shots, "sample-"+strings.ReplaceAll(name, " ", "-")+".png"), png, 0o644)
	}
}

// get runs a that returns a string within 20 s.
func (b *browser) get(a chromedp.Action[string]) string {
	b.t.Helper()
	return run(b, a)
}

// run runs a within 20 s and returns its value.
func run[T any](b *browser, a chromedp.Action[T]) T {
	b.t.Helper()
	sctx, cancel := context.WithTimeout(b.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(sctx, a)
	if err != nil {
		b.t.Fatal(err)
	}
	return v
}

// wantPath fails the test unless the page's address ends in p.
func (b *browser) wantPath(p string) {
	b.t.Helper()
	if loc := b.get(chromedp.Location()); !strings.HasSuffix(loc, p) {
		b.t.Fatalf("at %s, want %s", loc, p)
	}
}

func css(s string) chromedp.CSS { return chromedp.CSS(s) }

// TestSampleBrowser drives a real headless Chromium through the pages, with
// no JavaScript of the application's: register through the form, land on
// the notes page, add a note, log out, log in again and see the note; a
// wrong password shows the log-in form again with the error beside it and
// the username still in it.
func TestSampleBrowser(t *testing.T) {
	srv := newSampleServer(t)
	b := newBrowser(t)
	step, get, wantPath := b.step, b.get, b.wantPath

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
	step("log-in page when logged in",
		chromedp.Navigate(srv.URL+"/learn/"),
		chromedp.WaitVisible(css("#add-note")),
	)
	wantPath("/learn/notes")
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
	checkFormAgain(t, b, "browser_user")
	step("log in after the error",
		chromedp.SendKeys(css("#login-password"), "browser-pass-1"),
		chromedp.Click(css("#login button[type=submit]")),
		chromedp.WaitVisible(css(".note-list .note-title")),
	)
	wantPath("/learn/notes")
}

// checkFormAgain checks the page after a failed log-in: the log-in form,
// with the error in its card, the username kept, the password empty and
// focused.
func checkFormAgain(t *testing.T, b *browser, username string) {
	t.Helper()
	got := run(b, chromedp.Evaluate[formState](`(() => {
		const err = document.querySelector('p.auth-error');
		const card = err && err.closest('.learn-card');
		return {
			errorInCard: !!card && !!card.querySelector('form#login'),
			username: document.querySelector('#login-username').value,
			password: document.querySelector('#login-password').value,
			focused: document.activeElement ? document.activeElement.id : '',
		};
	})()`))
	if !got.ErrorInCard || got.Username != username || got.Password != "" || got.Focused != "login-password" {
		t.Errorf("after a failed log-in: %+v; want the error in the log-in card, username %q kept, the password empty and focused", got, username)
	}
}

// formState is what checkFormAgain reads from the page.
type formState struct {
	ErrorInCard bool   `json:"errorInCard"`
	Username    string `json:"username"`
	Password    string `json:"password"`
	Focused     string `json:"focused"`
}
