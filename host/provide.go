package host

import (
	"fmt"
	"reflect"
)

// checkProvide panics, saying what to do instead, unless v may be given to
// Provide now: before the application starts, or while its OnStart hooks
// run (the caches that look provided values up are built after them).
func checkProvide(v any, started, inHook bool) {
	t := reflect.TypeOf(v)
	switch {
	case t == nil:
		panic("zealgo: Provide(nil): give a value of the type handler parameters name, e.g. app.Provide(store)")
	case t == typeSQLDB:
		panic("zealgo: Provide(*sql.DB): handlers already receive the application's database as *sql.DB; " +
			"name it with --db, Config.DB or $" + DBEnv + " (App.DB returns it)")
	case started && !inHook:
		panic(fmt.Sprintf("zealgo: Provide(%s) after the application started: call Provide before it starts "+
			"(before host.Main, Serve or Handler) or inside an OnStart hook", t))
	}
}

func (l *lifecycle) isRunning() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.running
}

func (l *lifecycle) setRunning(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.running = on
}
