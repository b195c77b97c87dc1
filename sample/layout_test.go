package main

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestSampleLayout looks at the /learn/ pages in Chromium at a desktop
// (1280 px) and a phone (375 px) width: the log-in page, the same page
// after a wrong password and after a taken username, and the notes page. On each it measures that
// only the pages' own stylesheet is loaded, the top bar spans the window,
// every box keeps a margin from the window's edges, no framed box sits
// inside another (the doubled border), nothing scrolls sideways, and the
// log-out button is readable (WCAG contrast of at least 4.5). The 404
// page links home. Screenshots of every step are saved as TestSampleBrowser's
// (when kept: screenshotDir).
func TestSampleLayout(t *testing.T) {
	srv := newSampleServer(t)
	c := srv.client(t)
	c.register("layout_user", "layout-pass-1")
	c.addNote("A note with a title long enough to wrap on a phone's screen", "Its text, on two\nlines.")
	b := newBrowser(t)
	if b.shots != "" {
		t.Logf("screenshots in %s", b.shots)
	}

	for _, w := range []struct {
		width, height int64
		opts          []chromedp.EmulateViewportOption
	}{
		{1280, 800, nil},
		{375, 812, []chromedp.EmulateViewportOption{chromedp.EmulateMobile}},
	} {
		at := fmt.Sprintf(" at %d", w.width)
		b.step("log-in page"+at,
			chromedp.EmulateViewport(w.width, w.height, w.opts...),
			chromedp.Navigate(srv.URL+"/learn/"),
			chromedp.WaitVisible(css("#login")),
		)
		checkLayout(t, b, "log-in page"+at)
		b.step("failed log-in"+at,
			chromedp.SendKeys(css("#login-username"), "layout_user"),
			chromedp.SendKeys(css("#login-password"), "wrong-password"),
			chromedp.Click(css("#login button[type=submit]")),
			chromedp.WaitVisible(css("p.auth-error")),
		)
		checkFormAgain(t, b, "layout_user")
		checkLayout(t, b, "failed log-in"+at)
		b.step("failed registration"+at,
			chromedp.Navigate(srv.URL+"/learn/"),
			chromedp.WaitVisible(css("#register-form")),
			chromedp.SendKeys(css("#register-username"), "LAYOUT_user"),
			chromedp.SendKeys(css("#register-password"), "another-pass"),
			chromedp.Click(css("#register-form button[type=submit]")),
			chromedp.WaitVisible(css("#register-error")),
		)
		reg := run(b, chromedp.Evaluate[[]string](`[document.querySelector('#register-error').textContent,
			document.querySelector('#register-username').value, document.activeElement.id]`))
		if len(reg) != 3 || !strings.Contains(reg[0], "taken") || reg[1] != "LAYOUT_user" || reg[2] != "register-username" {
			t.Errorf("failed registration%s: error, username, focus = %q; want taken, LAYOUT_user kept and focused", at, reg)
		}
		checkLayout(t, b, "failed registration"+at)
		b.step("log in"+at,
			chromedp.Navigate(srv.URL+"/learn/"),
			chromedp.WaitVisible(css("#login")),
			chromedp.SendKeys(css("#login-username"), "layout_user"),
		)
		b.step("notes page"+at,
			chromedp.SendKeys(css("#login-password"), "layout-pass-1"),
			chromedp.Click(css("#login button[type=submit]")),
			chromedp.WaitVisible(css(".note-list .note-title")),
		)
		if got := checkLayout(t, b, "notes page"+at); got.Contrast < 4.5 {
			t.Errorf("notes page%s: the log-out button's contrast is %.2f, want at least 4.5", at, got.Contrast)
		}
		b.step("logged out"+at,
			chromedp.Click(css("#logout button")),
			chromedp.WaitVisible(css("#login")),
		)
	}
	b.step("404 page",
		chromedp.Navigate(srv.URL+"/learn/no-such-page"),
		chromedp.WaitVisible(css(`a[href="/"]`)),
	)
	b.step("home from the 404 page",
		chromedp.Click(css(`a[href="/"]`)),
		chromedp.WaitVisible(css("header .brand")), // the site's layout
	)
	if loc := b.get(chromedp.Location()); loc != srv.URL+"/" {
		t.Errorf("the 404 page's link led to %s, want %s/", loc, srv.URL)
	}
}

// layout is what measureLayout reads from a page.
type layout struct {
	Viewport    float64  `json:"viewport"`    // the width of the window's content area
	ScrollWidth float64  `json:"scrollWidth"` // the document's
	Bar         box      `json:"bar"`         // the top bar
	Boxes       []box    `json:"boxes"`       // every element drawn with a border or a background, outside the bar
	Sheets      []string `json:"sheets"`      // the stylesheets' addresses
	Contrast    float64  `json:"contrast"`    // of the log-out button's text on its background; 0 when none
}

type box struct {
	Name   string   `json:"name"`
	Left   float64  `json:"left"`
	Right  float64  `json:"right"`
	Top    float64  `json:"top"`
	Width  float64  `json:"width"`
	Framed bool     `json:"framed"` // a border on all four sides
	Inside []string `json:"inside"` // framed ancestors
	Styles string   `json:"styles"` // border and background, for messages
}

// It measures the page scrolled to its top: focusing a form field low on
// a phone's screen scrolls the page, and the bar is measured where it
// stands at the top.
const measureJS = `(() => {
	window.scrollTo(0, 0);
	const name = e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') +
		(typeof e.className === 'string' && e.className ? '.' + e.className.trim().split(/\s+/).join('.') : '');
	const sides = ['Top', 'Right', 'Bottom', 'Left'];
	const framed = s => sides.every(k => s['border' + k + 'Style'] !== 'none' && parseFloat(s['border' + k + 'Width']) > 0);
	const anyBorder = s => sides.some(k => s['border' + k + 'Style'] !== 'none' && parseFloat(s['border' + k + 'Width']) > 0);
	const painted = s => s.backgroundColor !== 'rgba(0, 0, 0, 0)' && s.backgroundColor !== 'transparent';
	const measure = e => {
		const r = e.getBoundingClientRect(), s = getComputedStyle(e);
		const inside = [];
		for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
			if (framed(getComputedStyle(p))) inside.push(name(p));
		}
		return {name: name(e), left: r.left, right: r.right, top: r.top, width: r.width, framed: framed(s), inside,
			styles: s.border + ' / ' + s.backgroundColor};
	};
	const rgb = c => (c.match(/[\d.]+/g) || []).map(Number);
	const background = e => {
		for (; e; e = e.parentElement) {
			const c = rgb(getComputedStyle(e).backgroundColor);
			if (c.length === 3 || c[3] > 0) return c;
		}
		return [255, 255, 255];
	};
	const lum = c => {
		const v = c.slice(0, 3).map(x => { x /= 255; return x <= 0.03928 ? x / 12.92 : Math.pow((x + 0.055) / 1.055, 2.4); });
		return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2];
	};
	const contrast = e => {
		const a = lum(rgb(getComputedStyle(e).color)), b = lum(background(e));
		return (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
	};
	const bar = document.querySelector('body > header');
	const boxes = [...document.body.querySelectorAll('*')].filter(e => {
		if (bar && bar.contains(e)) return false;
		if (['INPUT', 'TEXTAREA', 'BUTTON', 'SELECT', 'OPTION'].includes(e.tagName)) return false;
		const s = getComputedStyle(e);
		return s.display !== 'inline' && s.display !== 'none' && (anyBorder(s) || painted(s));
	});
	const logout = document.querySelector('#logout button');
	return {
		viewport: document.documentElement.clientWidth,
		scrollWidth: document.documentElement.scrollWidth,
		bar: bar ? measure(bar) : {name: 'none'},
		boxes: boxes.map(measure),
		sheets: [...document.styleSheets].map(s => s.href || 'inline'),
		contrast: logout ? contrast(logout) : 0,
	};
})()`

// edgeMargin is the least room a box keeps from the window's edges.
const edgeMargin = 12

// checkLayout measures the page and fails the test where it is wrong.
func checkLayout(t *testing.T, b *browser, page string) layout {
	t.Helper()
	l := run(b, chromedp.Evaluate[layout](measureJS))
	for _, s := range l.Sheets {
		if strings.HasSuffix(s, "/css/style.css") {
			t.Errorf("%s: the site's stylesheet is loaded: %v", page, l.Sheets)
		}
	}
	if len(l.Sheets) != 1 || !strings.HasSuffix(l.Sheets[0], "/css/learn.css") {
		t.Errorf("%s: stylesheets %v, want /css/learn.css alone", page, l.Sheets)
	}
	if l.Bar.Name == "none" || math.Abs(l.Bar.Left) > 0.5 || math.Abs(l.Bar.Top) > 0.5 || math.Abs(l.Bar.Width-l.Viewport) > 0.5 {
		t.Errorf("%s: the top bar %+v does not span the %.0f px window from its top edge", page, l.Bar, l.Viewport)
	}
	if l.ScrollWidth > l.Viewport+0.5 {
		t.Errorf("%s: the page is %.0f px wide in a %.0f px window", page, l.ScrollWidth, l.Viewport)
	}
	if len(l.Boxes) == 0 {
		t.Errorf("%s: no box measured", page)
	}
	for _, x := range l.Boxes {
		if x.Left < edgeMargin || x.Right > l.Viewport-edgeMargin {
			t.Errorf("%s: %s spans %.0f–%.0f px of %.0f: less than %d px from the edge (%s)",
				page, x.Name, x.Left, x.Right, l.Viewport, edgeMargin, x.Styles)
		}
		if x.Framed && len(x.Inside) > 0 {
			t.Errorf("%s: the framed %s sits inside the framed %v: a doubled border", page, x.Name, x.Inside)
		}
	}
	return l
}
