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
