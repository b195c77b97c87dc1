package host

// authHooks holds the application's optional authentication callbacks.
type authHooks struct {
	auth     func(*RequestContext) bool
	admin    func(*RequestContext) bool
	username func(*RequestContext) (string, bool)
}
