//go:build ignore

// A value with methods inside map[string]any or []any is handed over bare (not {}).
package main

import "github.com/zealgo/zealgo/host"

type user struct{ Name string }

func (u user) Hello() string { return "hello " + u.Name }

var any_methods = func(api *host.API) any {
	m := map[string]any{"user": user{"ada"}}
	m["ptr"] = &user{"bob"}
	list := []any{user{"cy"}}
	list = append(list, user{"di"})
	u := m["user"].(user) // a type assertion to the concrete type still finds it
	return map[string]any{"m": m, "list": list, "hello": u.Hello()}
}
