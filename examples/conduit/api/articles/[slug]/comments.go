//go:build ignore

// GET /api/articles/{slug}/comments lists an article's comments, oldest
// first; POST adds one.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/zealgo/zealgo/host"
)

// A token is optional to read, required to comment.
var middleware = []string{"jwt:HS256,env=CONDUIT_JWT_SECRET,optional"}

type newComment struct {
	Comment struct {
		Body string `json:"body" validate:"required,max=10000"`
	} `json:"comment"`
}

// readerComment is a comment_docs row as the reader sees it: $1 is the
// reader's id (0 for none).
const readerComment = `json_set(c.doc, '$.author.following',
	json(iif(EXISTS (SELECT 1 FROM follows WHERE followee_id = c.author_id AND follower_id = $1), 'true', 'false')))`

var get = func(api *host.API, db *sql.DB) (any, error) {
	article, err := articleID(api, db)
	if err != nil {
		return nil, err
	}
	var list string
	err = db.QueryRow(`SELECT json_group_array(json(doc)) FROM (SELECT `+readerComment+` AS doc
		FROM comment_docs c WHERE c.article_id = $2 ORDER BY c.id)`, viewer(api), article).Scan(&list)
	if err != nil {
		return nil, err
	}
	return map[string]any{"comments": json.RawMessage(list)}, nil
}

var post = func(api *host.API, db *sql.DB) (any, error) {
	me := viewer(api)
	if me == 0 {
		return nil, host.NewError(401, "unauthorized", "commenting needs a token")
	}
	article, err := articleID(api, db)
	if err != nil {
		return nil, err
	}
	var in newComment
	if err := api.Bind(&in); err != nil {
		return nil, err
	}
	var id int64
	err = db.QueryRow(`INSERT INTO comments (article_id, author_id, body) VALUES ($1, $2, $3) RETURNING id`,
		article, me, in.Comment.Body).Scan(&id)
	if err != nil {
		return nil, err
	}
	var doc string
	if err := db.QueryRow(`SELECT `+readerComment+` FROM comment_docs c WHERE c.id = $2`, me, id).Scan(&doc); err != nil {
		return nil, err
	}
	return map[string]any{"comment": json.RawMessage(doc)}, nil
}

// articleID returns the id of the article of the path, or a 404.
func articleID(api *host.API, db *sql.DB) (int64, error) {
	var id int64
	err := db.QueryRow(`SELECT id FROM articles WHERE slug = $1`, api.Param("slug")).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, host.NewError(404, "not_found", "article not found")
	}
	return id, err
}

// viewer is the id of the user whose token the jwt alias verified, 0
// without one.
func viewer(api *host.API) int64 {
	sub, _ := api.Claims()["sub"].(string)
	id, _ := strconv.ParseInt(sub, 10, 64)
	return id
}
