package host

import "net/http"

// servePublic answers every path outside /api. Pages and static files come
// with the public-files issue; until then everything here is 404.
func (a *App) servePublic(w http.ResponseWriter, r *http.Request) {
	writeError(w, errorf(http.StatusNotFound, CodeNotFound, "nothing is served at %s", r.URL.Path))
}
