package host

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
)

// A generation is what the application registered (its compiled main and
// its setup.go), made ready for the running server: the middleware of the
// When scopes and of UseAlias instantiated, the global middleware chained
// around the router. The server holds one at a time (setupState) and swaps
// it as a whole when setup.go changes: a request runs with the generation
// it started with.
type generation struct {
	reg  *registration
	mw   middlewareSet
	root http.Handler // the global middleware around the router
	// staticFast: no global middleware, so that static files may skip
	// the router (serveStaticFast).
	staticFast bool
}

// newGeneration instantiates reg's middleware for the server c.
func newGeneration(c *core, reg *registration) (*generation, error) {
	g := &generation{reg: reg}
	if err := g.mw.setup(reg.scopes, reg.useAliases, reg.aliases); err != nil {
		return nil, err
	}
	origins, err := cleanOrigins(append(slices.Clone(c.cfg.AllowOrigins), reg.origins...)) // cors.go
	if err != nil {
		return nil, err
	}
	h, err := c.edge.crossOrigin(chain((*router)(c), reg.global), append(slices.Clone(c.cfg.TrustedOrigins), origins...))
	if err != nil {
		return nil, err
	}
	g.root = allowOrigins(h, origins)
	g.staticFast = len(reg.global) == 0 && len(origins) == 0
	return g, nil
}

// errorFormat returns the error formatter of r's generation (nil: the
// envelope).
func errorFormat(r *http.Request) func(*http.Request, *Error) any {
	if st := stateOf(r); st != nil && st.app != nil {
		if g := st.app.setup.cur.Load(); g != nil {
			return g.reg.errorFormat
		}
	}
	return nil
}

// regOf returns what app's running server serves with: the current
// generation's registration once it started, else what was registered.
func regOf(app *App) *registration {
	if rt := rtOf(app); rt != nil {
		if g := rt.setup.cur.Load(); g != nil {
			return g.reg
		}
	}
	return &app.reg
}

// clone returns a copy of r that setup.go adds to without changing r:
// its slices and maps are copies. Each generation resolves the UseAlias
// middleware again (middlewareSet.setup), before it serves: a request never
// reads it.
func (r *registration) clone() *registration {
	return &registration{global: slices.Clone(r.global), aliases: maps.Clone(r.aliases), scopes: slices.Clone(r.scopes),
		useAliases: slices.Clone(r.useAliases), hooks: r.hooks, onTaskFinish: r.onTaskFinish,
		provided: maps.Clone(r.provided), errorPages: r.errorPages,
		origins: slices.Clone(r.origins), errorFormat: r.errorFormat}
}

// setupRefusal is the panic of a call that setup.go may not make: what
// is fixed once the application serves (setupRun.refuse).
type setupRefusal string

// refuse panics with a setupRefusal naming call when r is being filled by
// setup.go: the setup runner turns it into its error. Outside setup.go it
// does nothing.
func (r *registration) refuse(call string) {
	if r.bySetup {
		panic(setupRefusal(call))
	}
}

// refusalError is the error of a refused call.
func (s setupRefusal) error() error {
	return fmt.Errorf("zealgo: setup.go: app.%s cannot change while serving; restart, with it in a compiled main or a serve flag", string(s))
}

// genRoot is the current generation's global middleware and router, as
// the handler the edge wraps.
type genRoot setupState

func (h *genRoot) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.cur.Load().root.ServeHTTP(w, r)
}

// middleware returns the path-scoped middleware of the current
// generation.
func (s *setupState) middleware() *middlewareSet { return &s.cur.Load().mw }
