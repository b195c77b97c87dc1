//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

// public/about.go -> /about (and /about/ redirects here)
var about = func(app *host.App) any {
	return app.Render("about", map[string]any{"Title": "About zealgo"})
}
