package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestSampleLiveNotes: two tabs of the notes page of one account; a note
// added in the first appears in the second within a second, with no
// reload of the second (its WebSocket to /api/learn/live hears of the
// change and it fetches the list again).
func TestSampleLiveNotes(t *testing.T) {
	srv := newSampleServer(t)
	b := newBrowser(t)
	b.step("register",
		chromedp.Navigate(srv.URL+"/learn/"),
		chromedp.WaitVisible(css("#register-form")),
		chromedp.SendKeys(css("#register-username"), "live_user"),
		chromedp.SendKeys(css("#register-password"), "live-pass-1"),
		chromedp.Click(css("#register-form button[type=submit]")),
		chromedp.WaitVisible(css("#add-note")),
	)
	// The second tab shares the first's cookies (one browser).
	tab2, cancel := chromedp.NewContext(b.ctx)
	defer cancel()
	if err := chromedp.Do(tab2); err != nil { // open the tab on a context without a deadline
		t.Fatal(err)
	}
	second := &browser{t: t, ctx: tab2, shots: b.shots}
	second.step("second tab",
		chromedp.Navigate(srv.URL+"/learn/notes"),
		chromedp.WaitVisible(css("#add-note")),
		chromedp.WaitVisible(css(`body[data-live="on"]`)),
		chromedp.Evaluate[chromedp.Void](`window.loadedOnce = true`),
	)
	b.step("first tab live",
		chromedp.WaitVisible(css(`body[data-live="on"]`)),
	)
	b.step("add a note in the first tab",
		chromedp.SendKeys(css("#note-title"), "Seen live"),
		chromedp.SendKeys(css("#note-body"), "from the other tab"),
		chromedp.Click(css("#add-note button[type=submit]")),
		chromedp.WaitVisible(css(".note-list .note-title")),
	)
	added := time.Now()
	ctx, cancelPoll := context.WithTimeout(tab2, 10*time.Second)
	defer cancelPoll()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](
		`(document.querySelector('.note-list') || {textContent: ''}).textContent.includes('Seen live')`,
		chromedp.WithPollingTimeout(10*time.Second), chromedp.WithPollingInterval(10*time.Millisecond)))
	took := time.Since(added)
	if err != nil {
		state := second.get(chromedp.Evaluate[string](`document.body.getAttribute('data-live') + ' ' + document.querySelector('#notes-section').textContent`))
		t.Fatalf("the note did not appear in the second tab: %v (live, list: %q)", err, state)
	}
	t.Logf("the note appeared in the second tab %v after the first tab showed it", took.Round(time.Millisecond))
	if took > time.Second {
		t.Errorf("the note took %v to appear in the second tab, want at most 1 s", took)
	}
	reloaded := second.get(chromedp.Evaluate[string](`window.loadedOnce ? "no" : "yes"`))
	if reloaded != "no" {
		t.Errorf("the second tab reloaded the page")
	}
	if text := second.get(chromedp.Text(css(".note-list"))); !strings.Contains(text, "from the other tab") {
		t.Errorf("second tab shows %q", text)
	}
}
