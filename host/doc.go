// Package host is the zealgo framework: the application, the dispatcher
// handed to handler files, the universal return contract, routing,
// middleware, authentication hooks and the command line.
//
// A Go file dropped under api/ becomes an endpoint with no registration:
// api/device/list.go serves /api/device/list. It is interpreted by Yaegi,
// compiled lazily on its first request and recompiled into a fresh
// interpreter when it changes on disk:
//
//	//go:build ignore
//
//	package main
//
//	import "github.com/zealgo/zealgo/host"
//
//	var list = func(api *host.API) any {
//		return map[string]any{"method": api.Method(), "input": api.Input}
//	}
//
// A func named after the file serves every method (mode 1); funcs named
// get, post, put, delete and patch serve one method each (mode 2).
// Parameters are injected by type; results follow the return contract: an
// int is a status, a string HTML, a map, slice or struct JSON, a
// func(yield func(string) bool) or <-chan string a stream, an http.Handler
// or *http.Response is used directly, and a non-nil error is a 500.
//
// An application is a small main:
//
//	app := host.New()
//	app.Symbols(symbols.Symbols) // lets handler files import host
//	host.Main(app)               // serve, check, routes
//
// Echo serves HTTP behind this package; its public API speaks net/http.
package host
