//go:build ignore

// encoding/json never calls a MarshalJSON method of the file: a warning.
package main

import "github.com/zealgo/zealgo/host"

type user struct{ Name string }

func (u user) MarshalJSON() ([]byte, error) { return []byte(`{"custom":true}`), nil }

var json_method = func(api *host.API) any {
	return user{"ada"}
}
