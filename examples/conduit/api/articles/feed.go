//go:build ignore

// GET /api/articles/feed lists the articles of the users the reader
// follows, newest first.
package main

import (
	"database/sql"
	"encoding/json"
	"strconv"

	"github.com/zealgo/zealgo/host"
)

var middleware = []string{"jwt:HS256,env=CONDUIT_JWT_SECRET"}

type page struct {
	Limit  int `query:"limit" validate:"min=0,max=1000"`
	Offset int `query:"offset" validate:"min=0"`
}

// readerArticle is an article_docs row as the reader sees it: $1 is the
// reader's id.
const readerArticle = `json_set(d.doc,
	'$.favorited', json(iif(EXISTS (SELECT 1 FROM favorites WHERE article_id = d.id AND user_id = $1), 'true', 'false')),
	'$.author.following', json('true'))`

const followed = `d.author_id IN (SELECT followee_id FROM follows WHERE follower_id = $1)`

var get = func(api *host.API, db *sql.DB) (any, error) {
	var p page
	if err := api.Bind(&p); err != nil {
		return nil, err
	}
	if p.Limit == 0 {
		p.Limit = 20
	}
	me := viewer(api)
	var count int
	if err := db.QueryRow(`SELECT count(*) FROM article_docs d WHERE `+followed, me).Scan(&count); err != nil {
		return nil, err
	}
	var list string
	err := db.QueryRow(`SELECT json_group_array(json(doc)) FROM (SELECT json_remove(`+readerArticle+`, '$.body') AS doc
		FROM article_docs d WHERE `+followed+` ORDER BY d.id DESC LIMIT $2 OFFSET $3)`, me, p.Limit, p.Offset).Scan(&list)
	if err != nil {
		return nil, err
	}
	return map[string]any{"articles": json.RawMessage(list), "articlesCount": count}, nil
}

// viewer is the id of the user whose token the jwt alias verified.
func viewer(api *host.API) int64 {
	sub, _ := api.Claims()["sub"].(string)
	id, _ := strconv.ParseInt(sub, 10, 64)
	return id
}
