//go:build ignore

// GET /api/profiles/{username} answers a user's profile, with whether
// the reader follows them when a token is sent.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/zealgo/zealgo/host"
)

var middleware = []string{"jwt:HS256,env=CONDUIT_JWT_SECRET,optional"}

var get = func(api *host.API, db *sql.DB) (any, error) {
	var doc string
	err := db.QueryRow(`SELECT json_set(p.doc, '$.following',
			json(iif(EXISTS (SELECT 1 FROM follows WHERE followee_id = p.id AND follower_id = $1), 'true', 'false')))
		FROM profile_docs p WHERE p.username = $2`, viewer(api), api.Param("username")).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, host.NewError(404, "not_found", "profile not found")
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"profile": json.RawMessage(doc)}, nil
}

// viewer is the id of the user whose token the jwt alias verified, 0
// without one.
func viewer(api *host.API) int64 {
	sub, _ := api.Claims()["sub"].(string)
	id, _ := strconv.ParseInt(sub, 10, 64)
	return id
}
