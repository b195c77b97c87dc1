package host

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"
)

// maxIncludeDepth bounds nested Include calls, so that a page including
// itself fails instead of exhausting the stack.
const maxIncludeDepth = 8

type includeKey struct{}

// Include runs the page file public/<page>.go with this request, as if it
// served it, and returns what its func returns, for the caller to return
// (the whole result goes through the return contract then) or to use (a
// page returning HTML gives a string). page is written as a URL path:
// "/partials/nav" runs public/partials/nav.go, "/admin/" and "/" run the
// index.go of their directory. The included page gets the same injection,
// shares this request's input and response (what it writes through
// api.Res is part of the response), and picks its func by the request
// method; its own middleware list does not run. A missing or broken page,
// a method it does not serve, or includes nested more than 8 deep return
// an error (a 500 when returned).
//
//	var index = func(api *host.API) any {
//		nav, _ := api.Include("/partials/nav").(string)
//		return "<!doctype html>" + nav + "<main>home</main>"
//	}
func (a *API) Include(page string) any {
	v, err := a.include(page)
	if err != nil {
		return err
	}
	return v
}

func (a *API) include(page string) (any, error) {
	rel, ok := includePath(page)
	if !ok {
		return nil, fmt.Errorf("zealgo: include %q: a page path holds only letters, digits, _, - and /", page)
	}
	site := &rtOf(a.app).site
	if site.pages == nil {
		return nil, errors.New("zealgo: include: the application has not started")
	}
	ctx, depth := withIncludeDepth(a.r.Context())
	if depth > maxIncludeDepth {
		return nil, fmt.Errorf("zealgo: include %q: includes nested more than %d deep (does a page include itself?)", page, maxIncludeDepth)
	}
	f, err := site.pages.Get(site.pageFile(rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("zealgo: include %q: no page file public/%s: %w", page, rel, err)
	}
	if err != nil {
		return nil, fmt.Errorf("zealgo: include %q: %v", page, loadError(a.app.log, err, page).Hint)
	}
	fn, e := f.pick(a.r.Method)
	if e != nil {
		return nil, fmt.Errorf("zealgo: include %q: %v", page, e.Hint)
	}
	if f.input {
		a.input() // the page names a field that holds the input
	}
	sub := &API{Input: a.Input, Req: a.Req, Res: a.Res, app: a.app, r: a.r.WithContext(ctx), g: a.G(),
		in: a.in, params: a.params, inputSet: a.inputSet}
	v, err := fn.call(sub)
	if sub.done {
		a.done = true
	}
	if sub.err != nil && a.err == nil {
		a.err = sub.err
	}
	return v, err
}

// includePath turns "/partials/nav" into "partials/nav.go" and "/admin/"
// into "admin/index.go".
func includePath(page string) (string, bool) {
	p := strings.TrimPrefix(page, "/")
	if p == "" || strings.HasSuffix(p, "/") {
		p += "index"
	}
	for _, s := range strings.Split(p, "/") {
		if !validName(s) {
			return "", false
		}
	}
	return p + ".go", true
}

// withIncludeDepth returns ctx counting one more level of Include.
func withIncludeDepth(ctx context.Context) (context.Context, int) {
	d, _ := ctx.Value(includeKey{}).(int)
	return context.WithValue(ctx, includeKey{}, d+1), d + 1
}
