//go:build ignore

// GET /api/articles lists articles, newest first, filtered by tag, author
// or the user who favorited them; POST /api/articles creates one.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/zealgo/zealgo/host"
)

// A token is optional to list, required to create.
var middleware = []string{"jwt:HS256,env=CONDUIT_JWT_SECRET,optional"}

type listQuery struct {
	Tag       string `query:"tag"`
	Author    string `query:"author"`
	Favorited string `query:"favorited"`
	Limit     int    `query:"limit" validate:"min=0,max=1000"`
	Offset    int    `query:"offset" validate:"min=0"`
}

type newArticle struct {
	Article struct {
		Title       string   `json:"title" validate:"required,max=300"`
		Description string   `json:"description" validate:"required,max=1000"`
		Body        string   `json:"body" validate:"required"`
		TagList     []string `json:"tagList" validate:"max=20,dive,required,max=64"`
	} `json:"article"`
}

// readerArticle is an article_docs row as the reader sees it: $1 is the
// reader's id (0 for none).
const readerArticle = `json_set(d.doc,
	'$.favorited', json(iif(EXISTS (SELECT 1 FROM favorites WHERE article_id = d.id AND user_id = $1), 'true', 'false')),
	'$.author.following', json(iif(EXISTS (SELECT 1 FROM follows WHERE followee_id = d.author_id AND follower_id = $1), 'true', 'false')))`

// filter is the WHERE clause of a listing: $2 the tag, $3 the author,
// $4 the user who favorited ("" for any).
const filter = `($2 = '' OR d.id IN (SELECT article_id FROM article_tags WHERE name = $2))
	AND ($3 = '' OR d.author_id = (SELECT id FROM users WHERE username = $3))
	AND ($4 = '' OR d.id IN (SELECT f.article_id FROM favorites f JOIN users u ON u.id = f.user_id WHERE u.username = $4))`

var get = func(api *host.API, db *sql.DB) (any, error) {
	var q listQuery
	if err := api.Bind(&q); err != nil {
		return nil, err
	}
	if q.Limit == 0 {
		q.Limit = 20
	}
	args := []any{viewer(api), q.Tag, q.Author, q.Favorited}
	var count int
	if err := db.QueryRow(`SELECT count(*) FROM article_docs d WHERE `+filter, args...).Scan(&count); err != nil {
		return nil, err
	}
	var list string
	err := db.QueryRow(`SELECT json_group_array(json(doc)) FROM (SELECT json_remove(`+readerArticle+`, '$.body') AS doc
		FROM article_docs d WHERE `+filter+` ORDER BY d.id DESC LIMIT $5 OFFSET $6)`,
		append(args, q.Limit, q.Offset)...).Scan(&list)
	if err != nil {
		return nil, err
	}
	return map[string]any{"articles": json.RawMessage(list), "articlesCount": count}, nil
}

var post = func(api *host.API, db *sql.DB) (any, error) {
	me := viewer(api)
	if me == 0 {
		return nil, host.NewError(401, "unauthorized", "creating an article needs a token")
	}
	var in newArticle
	if err := api.Bind(&in); err != nil {
		return nil, err
	}
	a := in.Article
	tx, err := db.Begin()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	id, err := insertArticle(tx, me, a.Title, a.Description, a.Body)
	if err != nil {
		return nil, err
	}
	for _, tag := range a.TagList {
		if _, err := tx.Exec(`INSERT INTO article_tags (article_id, name) VALUES ($1, $2) ON CONFLICT DO NOTHING`, id, tag); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	var doc string
	if err := db.QueryRow(`SELECT `+readerArticle+` FROM article_docs d WHERE d.id = $2`, me, id).Scan(&doc); err != nil {
		return nil, err
	}
	api.Res.WriteHeader(201)
	return map[string]any{"article": json.RawMessage(doc)}, nil
}

// insertArticle inserts the article under the slug of its title, or of
// its title and a number when another article has that slug.
func insertArticle(tx *sql.Tx, author int64, title, description, body string) (int64, error) {
	base := slugify(title)
	for n := 1; n <= 100; n++ {
		slug := base
		if n > 1 {
			slug = base + "-" + strconv.Itoa(n)
		}
		var id int64
		err := tx.QueryRow(`INSERT INTO articles (slug, title, description, body, author_id) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (slug) DO NOTHING RETURNING id`, slug, title, description, body, author).Scan(&id)
		if err == nil {
			return id, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, err
		}
	}
	return 0, fmt.Errorf("conduit: no free slug for %q", base)
}

var nonWord = regexp.MustCompile(`[^\p{L}\p{N}]+`)

// slugify makes the URL segment of a title: "How to train your dragon"
// is "how-to-train-your-dragon".
func slugify(title string) string {
	s := strings.Trim(nonWord.ReplaceAllString(strings.ToLower(title), "-"), "-")
	if s == "" {
		s = "article"
	}
	return s
}

// viewer is the id of the user whose token the jwt alias verified, 0
// without one.
func viewer(api *host.API) int64 {
	sub, _ := api.Claims()["sub"].(string)
	id, _ := strconv.ParseInt(sub, 10, 64)
	return id
}
