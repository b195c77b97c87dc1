//go:build ignore

// A value with methods inside map[string]any or []any is handed over bare (not {}).
package main

import "github.com/zealgo/zealgo/host"

type user struct{ Name string }

func (u *user) Hello() string { return "hello " + u.Name }

var any_methods = func(api *host.API) any {
	m := map[string]any{"user": user{"ada"}}
	m["ptr"] = &user{"bob"}
	list := []any{user{"cy"}}
	list = append(list, user{"di"})
	return map[string]any{"m": m, "list": list}
}
