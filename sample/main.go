// Command sample is zealgo's sample account application: registration,
// login, logout and private notes, stored in SQLite. It serves the
// repository's api/, public/ and task/ directories (the handlers under
// api/learn/ and the pages under public/learn/), with the accounts and
// notes store compiled in and handed to them.
//
//	go run ./sample                      # serve . on 127.0.0.1:8080, data in ./data
//	go run ./sample serve --root . --addr 127.0.0.1:8080 --data ./data
//	go run ./sample check                # compile every handler, page and task file
//
// Then open http://127.0.0.1:8080/learn/ to register.
package main

import (
	"path/filepath"

	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/sample/store"
	"github.com/zealgo/zealgo/sample/storesym"
	"github.com/zealgo/zealgo/symbols"
)

func main() {
	app := host.New()
	setup(app)
	host.Main(app)
}

// setup configures app as the sample application and returns its store,
// which opens at start-up: the database is <data dir>/zealgo.db, the data
// directory coming from --data (default <root>/data).
func setup(app *host.App) *store.Store {
	s := store.New()
	app.OnStart(func(a *host.App) error {
		path := filepath.Join(a.Config().DataDir, store.FileName)
		if err := s.Open(path); err != nil {
			return err
		}
		a.Logger().Info("sample: database open", "path", path)
		if dups := s.CaseDuplicates(); len(dups) > 0 {
			a.Logger().Warn("zealgo: sample: usernames that differ only in case; rename all but one of each to get the unique index",
				"path", path, "names", dups)
		}
		return nil
	})
	app.OnStop(func() {
		if err := s.Close(); err != nil {
			app.Logger().Error("zealgo: sample: closing the store", "err", err)
		}
	})
	// Authenticated means: the session's user_id names an existing account.
	app.AuthChecker(func(g *host.RequestContext) bool { return s.CurrentUser(g) != nil })
	app.UsernameProvider(func(g *host.RequestContext) (string, bool) {
		if u := s.CurrentUser(g); u != nil {
			return u.Username, true
		}
		return "", false
	})
	app.Provide(s) // handler parameters of type *store.Store receive s
	app.Symbols(symbols.Symbols)
	app.Symbols(storesym.Symbols)
	return s
}
