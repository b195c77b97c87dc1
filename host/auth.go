package host

// authHooks holds the application's optional authentication callbacks.
type authHooks struct {
	auth     func(*RequestContext) bool
	admin    func(*RequestContext) bool
	username func(*RequestContext) (string, bool)
}

// AuthChecker sets the callback behind API.IsAuthenticated. It is called
// at request time, on every call. Nil clears it: nobody is authenticated.
// Set it before the application starts.
func (a *App) AuthChecker(f func(*RequestContext) bool) { a.mustConfigure(); a.reg.hooks.auth = f }

// AdminChecker sets the callback behind API.IsAdmin. It is called at
// request time, on every call. Nil clears it: nobody is an admin. Set it
// before the application starts.
func (a *App) AdminChecker(f func(*RequestContext) bool) { a.mustConfigure(); a.reg.hooks.admin = f }

// UsernameProvider sets the callback behind API.Username. It is called at
// request time, on every call. Nil clears it. Set it before the
// application starts.
func (a *App) UsernameProvider(f func(*RequestContext) (string, bool)) {
	a.mustConfigure()
	a.reg.hooks.username = f
}
