package host

// Route parameters (docs/routing.md): a directory or file under api/ or
// public/ named [name] matches any one URL segment, a file named
// [...name] one or more remaining segments. The values a request's route
// matched travel in its state (reqState.params) to the handler's API.

// Param returns the value of the route parameter name: for
// api/articles/[slug].go serving /api/articles/how-to-train,
// api.Param("slug") is "how-to-train". The value is percent-decoded and
// may hold any character but "/" (a [...name] parameter holds its
// segments joined by "/"); it is never empty, "." or "..". Param returns
// "" for a name the route does not have.
func (a *API) Param(name string) string {
	for _, p := range a.params {
		if p.name == name {
			return p.value
		}
	}
	return ""
}
