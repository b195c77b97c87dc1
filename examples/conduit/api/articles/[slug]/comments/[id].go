//go:build ignore

// DELETE /api/articles/{slug}/comments/{id} removes a comment, for its
// author only.
package main

import (
	"database/sql"
	"errors"
	"strconv"

	"github.com/zealgo/zealgo/host"
)

var middleware = []string{"jwt:HS256,env=CONDUIT_JWT_SECRET"}

var delete = func(api *host.API, db *sql.DB) (any, error) {
	id, err := strconv.ParseInt(api.Param("id"), 10, 64)
	if err != nil {
		return nil, host.NewError(404, "not_found", "comment not found")
	}
	var author int64
	err = db.QueryRow(`SELECT c.author_id FROM comments c JOIN articles a ON a.id = c.article_id
		WHERE c.id = $1 AND a.slug = $2`, id, api.Param("slug")).Scan(&author)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, host.NewError(404, "not_found", "comment not found")
	}
	if err != nil {
		return nil, err
	}
	if author != viewer(api) {
		return nil, host.NewError(403, "forbidden", "only the author may delete a comment")
	}
	if _, err := db.Exec(`DELETE FROM comments WHERE id = $1`, id); err != nil {
		return nil, err
	}
	return 204, nil
}

// viewer is the id of the user whose token the jwt alias verified.
func viewer(api *host.API) int64 {
	sub, _ := api.Claims()["sub"].(string)
	id, _ := strconv.ParseInt(sub, 10, 64)
	return id
}
