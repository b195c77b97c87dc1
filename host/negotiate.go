package host

import (
	"net/http"
	"strconv"
	"strings"
)

// Content negotiation between HTML and JSON, by the request's Accept
// header. The framework asks it once per request outside /api/ (an error
// there is an HTML page unless the client prefers JSON); handlers ask it
// through API.PrefersHTML and API.PrefersJSON, middleware through the
// functions below.
//
// Each of the two types takes the quality (q) of the most specific media
// range that matches it: text/html or application/xhtml+xml, then text/*,
// then */* for HTML; application/json or application/problem+json, then
// application/*, then */* for JSON. A type no range matches, or one with
// q=0, is not acceptable. The higher quality wins; at equal quality the
// type named more specifically wins (so "application/json, */*" prefers
// JSON and a browser's "text/html,...,*/*;q=0.8" HTML). When neither wins
// the request prefers neither: no Accept header, "*/*" alone, or both types
// named alike. Each caller then takes its own default: the framework's
// error pages HTML, a JSON endpoint JSON.
//
//	Accept                                      PrefersHTML  PrefersJSON
//	(none), */*                                 false        false
//	text/html,application/xhtml+xml,*/*;q=0.8   true         false
//	application/json                            false        true
//	application/json, text/plain, */*           false        true
//	text/html;q=0.5, application/json           false        true

// PrefersJSON reports whether the Accept header of r ranks JSON above
// HTML (see the rules above). The framework sends an error outside /api/
// as the JSON envelope exactly when it does.
func PrefersJSON(r *http.Request) bool {
	html, js := acceptRanks(r)
	return js.above(html)
}

// PrefersHTML reports whether the Accept header of r ranks HTML above
// JSON (see the rules above): a browser asking for a page. A JSON endpoint
// that also serves browsers' forms answers with a page or a redirect
// exactly when it does.
func PrefersHTML(r *http.Request) bool {
	html, js := acceptRanks(r)
	return html.above(js)
}

// PrefersJSON reports whether the request's Accept header ranks JSON
// above HTML; see host.PrefersJSON.
func (a *API) PrefersJSON() bool { return PrefersJSON(a.r) }

// PrefersHTML reports whether the request's Accept header ranks HTML
// above JSON, as a browser's does; see host.PrefersHTML.
func (a *API) PrefersHTML() bool { return PrefersHTML(a.r) }

// acceptRank is how an Accept header ranks one type: the quality and the
// specificity (2 exact, 1 type/*, 0 */*) of the most specific range that
// matches it; spec is -1 when none does.
type acceptRank struct {
	q    float64
	spec int
}

// above reports whether a type ranked x is preferred to one ranked y.
func (x acceptRank) above(y acceptRank) bool {
	if x.spec < 0 || x.q <= 0 {
		return false
	}
	if y.spec < 0 || x.q != y.q {
		return x.q > y.q
	}
	return x.spec > y.spec
}

// acceptRanks ranks HTML and JSON by the Accept header lines of r.
func acceptRanks(r *http.Request) (html, js acceptRank) {
	html.spec, js.spec = -1, -1
	for _, line := range r.Header.Values("Accept") {
		for rest, more := line, true; more; {
			var part string
			part, rest, more = strings.Cut(rest, ",")
			mt, q := mediaRange(part)
			switch {
			case strings.EqualFold(mt, "text/html"), strings.EqualFold(mt, "application/xhtml+xml"):
				html.match(q, 2)
			case strings.EqualFold(mt, "application/json"), strings.EqualFold(mt, "application/problem+json"):
				js.match(q, 2)
			case strings.EqualFold(mt, "text/*"):
				html.match(q, 1)
			case strings.EqualFold(mt, "application/*"):
				js.match(q, 1)
			case mt == "*/*":
				html.match(q, 0)
				js.match(q, 0)
			}
		}
	}
	return html, js
}

// match records a range of specificity spec and quality q that matches
// the type: a more specific range overrides a less specific one; among
// ranges alike, the highest quality counts.
func (x *acceptRank) match(q float64, spec int) {
	if spec > x.spec || spec == x.spec && q > x.q {
		*x = acceptRank{q, spec}
	}
}

// mediaRange parses one element of an Accept header, "type/sub;q=0.5",
// into the range and its quality: 1 without a q parameter or with one
// that is no number from 0 to 1.
func mediaRange(part string) (string, float64) {
	mt, params, _ := strings.Cut(part, ";")
	q := 1.0
	for more := params != ""; more; {
		var p string
		p, params, more = strings.Cut(params, ";")
		k, v, _ := strings.Cut(p, "=")
		if !strings.EqualFold(strings.TrimSpace(k), "q") {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil && f >= 0 && f <= 1 {
			q = f
		}
	}
	return strings.TrimSpace(mt), q
}
