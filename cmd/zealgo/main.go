// Command zealgo serves a directory of handler files: every Go file under
// api/ is an endpoint, every page under public/ a page, with no route
// registration, no recompile and no restart.
//
//	zealgo serve --root . --addr 127.0.0.1:8080
//	zealgo check --root .
//	zealgo routes --root .
//	zealgo new blog --module example.com/blog
package main

import (
	"github.com/zealgo/zealgo/host"
	"github.com/zealgo/zealgo/symbols"
)

func main() {
	app := host.New()
	app.Symbols(symbols.Symbols)
	host.Main(app)
}
