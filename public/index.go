//go:build ignore

package main

import "github.com/zealgo/zealgo/host"

// public/index.go -> /
//
// A page is a handler file under public/: the func named after the file
// serves every method and its result follows the return contract. Here it
// renders template/home.html (inside template/layout.html).
var index = func(api *host.API, app *host.App) any {
	return app.Render("home", map[string]any{
		"Title": "zealgo",
		"Endpoints": []map[string]any{
			{"URL": "/api/device/list", "File": "api/device/list.go"},
			{"URL": "/api/users", "File": "api/users.go"},
			{"URL": "/api/php/get?x=1", "File": "api/php/get.go"},
		},
		"Method": api.Method(),
	})
}
