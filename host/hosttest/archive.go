package hosttest

import (
	"fmt"
	"io/fs"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/tools/txtar"
)

// archive is a golden archive, parsed and checked before anything runs.
type archive struct {
	files     map[string][]byte // slash-separated names under the root
	exchanges []exchange
	dev       bool // config "dev"
	cookies   bool // config "cookies"
	forbid    []string
	log       []string
	nolog     []string
}

// exchange is one request and the response it must produce.
type exchange struct {
	name    string // "request", "request 2", ...
	line    string // the request's first line: "GET /api/x"
	method  string
	target  string
	header  []headerLine
	body    string
	status  int
	want    []headerCheck
	bodyRe  *regexp.Regexp // the expected body is "~regexp"
	rawBody string         // the expected body without its final newline
	// captures are the response's "capture" lines, in order.
	captures []capture
}

// headerLine is a request header.
type headerLine struct{ name, value string }

// headerCheck is an expected response header: equal to value, matching re,
// or absent.
type headerCheck struct {
	name   string
	value  string
	re     *regexp.Regexp
	absent bool
}

// parseArchive splits ar into files and test sections and checks both.
func parseArchive(ar *txtar.Archive) (*archive, error) {
	a := &archive{files: map[string][]byte{}}
	requests, responses := map[int]string{}, map[int]string{}
	seen := map[string]bool{}
	for _, f := range ar.Files {
		if seen[f.Name] {
			return nil, fmt.Errorf("zealgo: hosttest: section %q appears twice", f.Name)
		}
		seen[f.Name] = true
		if err := a.addSection(f, requests, responses); err != nil {
			return nil, err
		}
	}
	if len(requests) == 0 {
		return nil, fmt.Errorf("zealgo: hosttest: the archive has no request section")
	}
	for n := 1; n <= len(requests) || n <= len(responses); n++ {
		req, okReq := requests[n]
		resp, okResp := responses[n]
		if !okReq || !okResp {
			return nil, fmt.Errorf("zealgo: hosttest: %q or %q is missing (sections are numbered from 1 with no gaps)",
				sectionName("request", n), sectionName("response", n))
		}
		x, err := parseExchange(n, req, resp)
		if err != nil {
			return nil, err
		}
		a.exchanges = append(a.exchanges, x)
	}
	return a, a.checkVariables()
}

// addSection files one section of the archive where it belongs.
func (a *archive) addSection(f txtar.File, requests, responses map[int]string) error {
	data := string(f.Data)
	switch f.Name {
	case "config":
		return a.setConfig(lines(data))
	case "forbid":
		a.forbid = lines(data)
		return nil
	case "log":
		a.log = lines(data)
		return nil
	case "nolog":
		a.nolog = lines(data)
		return nil
	}
	for _, kind := range []struct {
		prefix string
		into   map[int]string
	}{{"request", requests}, {"response", responses}} {
		if strings.HasPrefix(f.Name, kind.prefix) {
			n, err := sectionNumber(f.Name, kind.prefix)
			if err != nil {
				return err
			}
			kind.into[n] = data
			return nil
		}
	}
	if !fs.ValidPath(f.Name) || f.Name == "." || strings.Contains(f.Name, `\`) {
		return fmt.Errorf("zealgo: hosttest: file %q: want a relative, slash-separated path inside the root", f.Name)
	}
	a.files[f.Name] = f.Data
	return nil
}

// setConfig applies the settings of a config section.
func (a *archive) setConfig(settings []string) error {
	for _, s := range settings {
		switch s {
		case "dev":
			a.dev = true
		case "cookies":
			a.cookies = true
		default:
			return fmt.Errorf("zealgo: hosttest: unknown config %q (want dev or cookies)", s)
		}
	}
	return nil
}

// sectionNumber reads n from "request" (1) or "request n" (n >= 2).
func sectionNumber(name, prefix string) (int, error) {
	if name == prefix {
		return 1, nil
	}
	digits, ok := strings.CutPrefix(name, prefix+" ")
	n, err := strconv.Atoi(digits)
	if !ok || err != nil || n < 2 || strconv.Itoa(n) != digits {
		return 0, fmt.Errorf("zealgo: hosttest: section %q: want %q or %q with n from 2", name, prefix, prefix+" n")
	}
	return n, nil
}

// sectionName is the inverse of sectionNumber.
func sectionName(prefix string, n int) string {
	if n == 1 {
		return prefix
	}
	return prefix + " " + strconv.Itoa(n)
}

// parseExchange reads request section n and its response section.
func parseExchange(n int, reqText, respText string) (exchange, error) {
	name := sectionName("request", n)
	first, hdrs, body := splitMessage(reqText)
	x := exchange{name: name, line: first, body: strings.TrimSuffix(body, "\n")}
	var ok bool
	x.method, x.target, ok = strings.Cut(first, " ")
	if !ok || x.method == "" || x.target == "" || strings.Contains(x.target, " ") {
		return x, fmt.Errorf("zealgo: hosttest: %s: first line %q: want \"METHOD target\"", name, first)
	}
	for _, h := range hdrs {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return x, fmt.Errorf("zealgo: hosttest: %s: header line %q: want \"Name: value\"", name, h)
		}
		x.header = append(x.header, headerLine{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return x, x.parseResponse(sectionName("response", n), respText)
}

// parseResponse reads the expected status, headers and body.
func (x *exchange) parseResponse(name, text string) error {
	status, hdrs, body := splitMessage(text)
	n, err := strconv.Atoi(strings.TrimSpace(status))
	if err != nil || n < 100 || n > 999 {
		return fmt.Errorf("zealgo: hosttest: %s: first line %q: want a status code", name, status)
	}
	x.status = n
	for _, h := range hdrs {
		if isCapture(h) {
			c, err := parseCapture(h)
			if err != nil {
				return fmt.Errorf("zealgo: hosttest: %s: %w", name, err)
			}
			x.captures = append(x.captures, c)
			continue
		}
		c, err := parseHeaderCheck(h)
		if err != nil {
			return fmt.Errorf("zealgo: hosttest: %s: %w", name, err)
		}
		x.want = append(x.want, c)
	}
	x.rawBody = strings.TrimSuffix(body, "\n")
	if re, ok := strings.CutPrefix(x.rawBody, "~"); ok {
		if x.bodyRe, err = regexp.Compile(re); err != nil {
			return fmt.Errorf("zealgo: hosttest: %s: body: %w", name, err)
		}
	}
	return nil
}

// parseHeaderCheck reads "Name: value", "Name: ~regexp" or "!Name".
func parseHeaderCheck(h string) (headerCheck, error) {
	if name, ok := strings.CutPrefix(h, "!"); ok {
		return headerCheck{name: strings.TrimSpace(name), absent: true}, nil
	}
	k, v, ok := strings.Cut(h, ":")
	if !ok || strings.TrimSpace(k) == "" {
		return headerCheck{}, fmt.Errorf("header line %q: want \"Name: value\", \"Name: ~regexp\" or \"!Name\"", h)
	}
	c := headerCheck{name: strings.TrimSpace(k), value: strings.TrimSpace(v)}
	if re, ok := strings.CutPrefix(c.value, "~"); ok {
		var err error
		if c.re, err = regexp.Compile(re); err != nil {
			return c, fmt.Errorf("header %s: %w", c.name, err)
		}
	}
	return c, nil
}

// splitMessage splits "first line\nheaders\n\nbody".
func splitMessage(s string) (first string, header []string, body string) {
	head, body, _ := strings.Cut(s, "\n\n")
	hl := strings.Split(strings.TrimRight(head, "\n"), "\n")
	return strings.TrimSpace(hl[0]), hl[1:], body
}

// lines returns the non-blank lines of s, trimmed.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}
