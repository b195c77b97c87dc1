//go:build ignore

// POST /api/articles/{slug}/favorite favorites an article; DELETE
// unfavorites it. Both answer the article.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/zealgo/zealgo/host"
)

var middleware = []string{"jwt:HS256,env=CONDUIT_JWT_SECRET"}

// readerArticle is an article_docs row as the reader sees it: $1 is the
// reader's id.
const readerArticle = `json_set(d.doc,
	'$.favorited', json(iif(EXISTS (SELECT 1 FROM favorites WHERE article_id = d.id AND user_id = $1), 'true', 'false')),
	'$.author.following', json(iif(EXISTS (SELECT 1 FROM follows WHERE followee_id = d.author_id AND follower_id = $1), 'true', 'false')))`

var post = func(api *host.API, db *sql.DB) (any, error) {
	return favorite(api, db, `INSERT INTO favorites (user_id, article_id) VALUES ($1, $2) ON CONFLICT DO NOTHING`)
}

var delete = func(api *host.API, db *sql.DB) (any, error) {
	return favorite(api, db, `DELETE FROM favorites WHERE user_id = $1 AND article_id = $2`)
}

// favorite runs change for the reader and the article of the path, then
// answers the article.
func favorite(api *host.API, db *sql.DB, change string) (any, error) {
	me := viewer(api)
	var id int64
	err := db.QueryRow(`SELECT id FROM articles WHERE slug = $1`, api.Param("slug")).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, host.NewError(404, "not_found", "article not found")
	}
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(change, me, id); err != nil {
		return nil, err
	}
	var doc string
	if err := db.QueryRow(`SELECT `+readerArticle+` FROM article_docs d WHERE d.id = $2`, me, id).Scan(&doc); err != nil {
		return nil, err
	}
	return map[string]any{"article": json.RawMessage(doc)}, nil
}

// viewer is the id of the user whose token the jwt alias verified.
func viewer(api *host.API) int64 {
	sub, _ := api.Claims()["sub"].(string)
	id, _ := strconv.ParseInt(sub, 10, 64)
	return id
}
