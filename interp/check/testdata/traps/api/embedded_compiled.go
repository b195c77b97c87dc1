//go:build ignore

// A struct of the file embedding compiled types: built, this answers
// {"link":{"Host":"x",...,"Title":"t"},"stamp":"\"1970-01-01T00:00:00Z\""} (time.Time's
// MarshalJSON promoted, url.URL's fields promoted); interpreted, time.Time's MarshalJSON is
// ignored here ({"Time":...,"Note":"n"}; json.Marshal(s) of a stamp variable panics with
// "method not found"), and JSON nests the URL under "URL".
package main

import (
	"encoding/json"
	"net/url"
	"time"

	"github.com/zealgo/zealgo/host"
)

type stamp struct {
	time.Time
	Note string
}

type link struct {
	url.URL
	Title string
}

var embedded_compiled = func(api *host.API) any {
	u, _ := url.Parse("http://x/y")
	l := link{*u, "t"}
	b, _ := json.Marshal(l)
	return map[string]any{"link": string(b), "stamp": encode(stamp{time.Unix(0, 0).UTC(), "n"})}
}

// encode returns the JSON of v, or the panic's text.
func encode(v any) (out string) {
	defer func() {
		if r := recover(); r != nil {
			out = "panic"
		}
	}()
	b, err := json.Marshal(v)
	if err != nil {
		return err.Error()
	}
	return string(b)
}
