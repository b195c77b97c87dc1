//go:build ignore

// POST /api/profiles/{username}/follow follows a user; DELETE unfollows.
// Both answer the profile.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/zealgo/zealgo/host"
)

var middleware = []string{"jwt:HS256,env=CONDUIT_JWT_SECRET"}

var post = func(api *host.API, db *sql.DB) (any, error) {
	return follow(api, db, `INSERT INTO follows (follower_id, followee_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`)
}

var delete = func(api *host.API, db *sql.DB) (any, error) {
	return follow(api, db, `DELETE FROM follows WHERE follower_id = $1 AND followee_id = $2`)
}

// follow runs change for the reader and the user named in the path, then
// answers the user's profile.
func follow(api *host.API, db *sql.DB, change string) (any, error) {
	me := viewer(api)
	var id int64
	err := db.QueryRow(`SELECT id FROM users WHERE username = $1`, api.Param("username")).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, host.NewError(404, "not_found", "profile not found")
	}
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(change, me, id); err != nil {
		return nil, err
	}
	var doc string
	err = db.QueryRow(`SELECT json_set(doc, '$.following',
			json(iif(EXISTS (SELECT 1 FROM follows WHERE followee_id = $1 AND follower_id = $2), 'true', 'false')))
		FROM profile_docs WHERE id = $1`, id, me).Scan(&doc)
	if err != nil {
		return nil, err
	}
	return map[string]any{"profile": json.RawMessage(doc)}, nil
}

// viewer is the id of the user whose token the jwt alias verified.
func viewer(api *host.API) int64 {
	sub, _ := api.Claims()["sub"].(string)
	id, _ := strconv.ParseInt(sub, 10, 64)
	return id
}
