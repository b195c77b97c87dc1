//go:build ignore

// GET /api/articles/{slug}/comments lists an article's comments, oldest
// first; POST adds one.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"sort"
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
	article, problem, err := articleID(api, db)
	if problem != nil || err != nil {
		return problem, err
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
		return fail(api, 401, "commenting needs a token"), nil
	}
	article, problem, err := articleID(api, db)
	if problem != nil || err != nil {
		return problem, err
	}
	var in newComment
	if err := api.Bind(&in); err != nil {
		return invalid(api, err)
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

// articleID returns the id of the article of the path, or the 404 to
// answer.
func articleID(api *host.API, db *sql.DB) (int64, any, error) {
	var id int64
	err := db.QueryRow(`SELECT id FROM articles WHERE slug = $1`, api.Param("slug")).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fail(api, 404, "article not found"), nil
	}
	return id, nil, err
}

// viewer is the id of the user whose token the jwt alias verified, 0
// without one.
func viewer(api *host.API) int64 {
	sub, _ := api.Claims()["sub"].(string)
	id, _ := strconv.ParseInt(sub, 10, 64)
	return id
}

// fail answers status with RealWorld's error body.
func fail(api *host.API, status int, msgs ...string) any {
	api.Res.WriteHeader(status)
	return map[string]any{"errors": map[string]any{"body": msgs}}
}

// invalid answers input that api.Bind refused: 422 with a message per
// failing field; a body too large keeps its 413.
func invalid(api *host.API, err error) (any, error) {
	var be *host.BindError
	if !errors.As(err, &be) {
		return nil, err
	}
	msgs := []string{}
	for _, f := range be.Fields {
		msgs = append(msgs, f.Message)
	}
	sort.Strings(msgs)
	if len(msgs) == 0 {
		msgs = append(msgs, be.Hint)
	}
	status := 422
	if be.Status == 413 || be.Status == 415 {
		status = be.Status
	}
	return fail(api, status, msgs...), nil
}
