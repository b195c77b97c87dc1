package host

// Templates: template/<name>.html, rendered with html/template. The name
// of a template is its path below template/ without ".html" ("home",
// "errors/404"), and every file is defined under its name in the set of
// every other, so a page can use a layout:
//
//	template/layout.html:  <html><body>{{block "content" .}}{{end}}</body></html>
//	template/home.html:    {{template "layout" .}}{{define "content"}}<h1>{{.Title}}</h1>{{end}}
//
// Rendering name parses name last, so its {{define}}s win over those of the
// other files. Templates are read on first use and read again after any
// file under template/ changes (created, written, removed, renamed). The
// engine is internal/tmplset.

// Render executes template/<name>.html with data and returns the result as
// a value for the return contract: the HTML as a string, or an error (a
// missing template, a parse or execution failure), which is a 500 when a
// page or handler returns it:
//
//	var index = func(app *host.App) any { return app.Render("home", map[string]any{"Title": "Hi"}) }
func (a *App) Render(name string, data any) any {
	html, err := a.RenderHTML(name, data)
	if err != nil {
		return err
	}
	return html
}

// RenderHTML executes template/<name>.html with data and returns the HTML.
// Nothing is returned when execution fails part way.
func (a *App) RenderHTML(name string, data any) (string, error) {
	if err := a.init(); err != nil {
		return "", err
	}
	return a.rt.site.templates.Render(name, data)
}
