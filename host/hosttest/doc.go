// Package hosttest tests a zealgo application with golden archives: each
// archive holds the requests to send and the status, headers and body each
// must produce, and, when the test needs them, the handler files to serve.
// It is the harness the framework's own golden tests use, for an
// application's own files.
//
// A test runs every archive of a directory, each as a subtest against a
// fresh application on a loopback server:
//
//	func TestGolden(t *testing.T) {
//		hosttest.RunDir(t, "testdata/golden") // a plain `zealgo serve` application
//	}
//
// An application with its own main builds its App in a function that both
// main and the test call, and hands it to WithApp; WithRoot runs the
// archives against the application's own directory instead of files the
// archives hold:
//
//	func newApp() *host.App {
//		app := host.New()
//		app.Symbols(symbols.Symbols)
//		app.Provide(store.New())
//		return app
//	}
//
//	func main() { host.Main(newApp()) }
//
//	func TestGolden(t *testing.T) {
//		hosttest.RunDir(t, "testdata/golden", hosttest.WithApp(newApp), hosttest.WithRoot("."))
//	}
//
// For each archive hosttest calls the App function, sets the root, a fresh
// temporary data directory and a debug-level log of its own with
// App.Configure, starts the application and serves it with net/http/httptest.
// Check does the same without a *testing.T and returns what it found.
//
// # The archive format
//
// An archive is a txtar file (golang.org/x/tools/txtar). Its comment, the
// text before the first section, says what the archive shows and is not
// read. Sections named as below are the test; every other section is a file
// written, under its slash-separated name, into a fresh temporary
// application root (api/..., public/..., template/..., task/...):
//
//	Creating a device answers 201 with the device.
//	-- api/device/create.go --
//	//go:build ignore
//
//	package main
//
//	import "github.com/zealgo/zealgo/host"
//
//	var post = func(api *host.API) any {
//		api.Res.WriteHeader(201)
//		return map[string]any{"name": api.String("name")}
//	}
//	-- request --
//	POST /api/device/create
//	Content-Type: application/json
//
//	{"name":"sensor"}
//	-- response --
//	201
//	Content-Type: application/json
//	!Set-Cookie
//
//	{"name":"sensor"}
//	-- request 2 --
//	GET /api/device/create
//
//	-- response 2 --
//	405
//	Allow: POST, OPTIONS
//
//	~"error":"method_not_allowed"
//
// "request" and "response" are the first exchange; "request 2" and
// "response 2" the second, and so on, sent in that order on one
// application. Every request needs its response and the numbers have no
// gaps.
//
// A request is the method and the target, sent as written (neither cleaned
// nor escaped again), then header lines "Name: value" (a Host line sets the
// request's host), a blank line and the body; the newline that ends the
// section is not part of the body. Redirects are not followed.
//
// A response is the status, then the headers to check, a blank line and the
// body:
//
//	Name: value    the header's values, joined by ", ", equal value
//	Name: ~regexp  they match the regular expression (package regexp)
//	!Name          the header is absent
//
// Headers not listed are not checked. The body must equal the section's
// text without its final newline, or, when that text starts with "~", match
// the regular expression that follows. A static file written from an
// archive ends with a newline too: WithTrailingNewline accepts it. No
// response body may hold a stack trace ("goroutine ", "runtime/debug") or
// handler source ("package main") unless the expected body holds it too.
//
// A response may also keep a value for the later requests, a token or an
// id, with a capture line among its header lines:
//
//	capture NAME = json .path          the JSON body's value at .path
//	                                   (.user.token, .items.0.id; "." the
//	                                   whole body): a string as it is,
//	                                   anything else as its JSON text
//	capture NAME = header Name         the header's values, joined by ", "
//	capture NAME = header Name ~re     the first group of re matched in the
//	                                   header (the whole match without one)
//	capture NAME = body ~re            the same over the body
//
// A later request uses the value as {{NAME}} in its target, its header
// lines or its body (NAME is letters, digits and "_"):
//
//	-- response --
//	201
//	capture token = json .user.token
//	capture user = header Location
//
//	~"token"
//	-- request 2 --
//	GET {{user}}
//	Authorization: Bearer {{token}}
//
// A capture that finds nothing (no such header, a body that is not JSON or
// has no such path, a regular expression that does not match) is a
// failure naming the exchange and the capture line, and the later requests
// are not sent. A value captured again replaces the first. Exchange.Request
// is the request line as written, with its {{NAME}}.
//
// Optional sections, one item a line:
//
//	-- config --   settings of this archive's run:
//	               dev      serve in development mode (host.WithDev)
//	               cookies  keep the cookies responses set and send them
//	                        with the later requests (a session, a log-in)
//	-- forbid --   substrings no response body may hold, unless expected
//	-- log --      substrings the server's log must hold after the exchanges
//	-- nolog --    substrings it must not hold
//
// An archive that breaks these rules (a request without its response, an
// unknown setting, a file name that leaves the root, a bad regular
// expression, a {{NAME}} that no earlier response captures) is an error,
// not a failed exchange.
package hosttest
