//go:build ignore

// GET /api/articles/{slug} answers an article; PUT changes it and DELETE
// removes it, for its author only.
package main

import (
	"database/sql"
	"encoding/json"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"github.com/zealgo/zealgo/host"
)

// A token is optional to read, required to change.
var middleware = []string{"jwt:HS256,env=CONDUIT_JWT_SECRET,optional"}

// articleUpdate holds the fields to change: a member left out is kept.
type articleUpdate struct {
	Article struct {
		Title       *string `json:"title" validate:"omitnil,min=1,max=300"`
		Description *string `json:"description" validate:"omitnil,min=1,max=1000"`
		Body        *string `json:"body" validate:"omitnil,min=1"`
	} `json:"article"`
}

// readerArticle is an article_docs row as the reader sees it: $1 is the
// reader's id (0 for none).
const readerArticle = `json_set(d.doc,
	'$.favorited', json(iif(EXISTS (SELECT 1 FROM favorites WHERE article_id = d.id AND user_id = $1), 'true', 'false')),
	'$.author.following', json(iif(EXISTS (SELECT 1 FROM follows WHERE followee_id = d.author_id AND follower_id = $1), 'true', 'false')))`

var get = func(api *host.API, db *sql.DB) (any, error) {
	return article(api, db, "slug", api.Param("slug"))
}

var put = func(api *host.API, db *sql.DB) (any, error) {
	id, err := ownArticle(api, db)
	if err != nil {
		return nil, err
	}
	var in articleUpdate
	if err := api.Bind(&in); err != nil {
		return nil, err
	}
	a := in.Article
	slug := (*string)(nil)
	if a.Title != nil {
		s := slugify(*a.Title)
		slug = &s
	}
	// A new title makes a new slug, with the article's id when another
	// article has that slug.
	_, err = db.Exec(`UPDATE articles SET title = coalesce($1, title), description = coalesce($2, description),
		body = coalesce($3, body),
		slug = CASE WHEN $4 IS NULL THEN slug
			WHEN EXISTS (SELECT 1 FROM articles WHERE slug = $4 AND id != $5) THEN $4 || '-' || $5 ELSE $4 END,
		updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = $5`,
		a.Title, a.Description, a.Body, slug, id)
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return nil, host.NewError(422, "taken", "another article has this title's slug")
	}
	if err != nil {
		return nil, err
	}
	return article(api, db, "id", id)
}

var delete = func(api *host.API, db *sql.DB) (any, error) {
	id, err := ownArticle(api, db)
	if err != nil {
		return nil, err
	}
	if _, err := db.Exec(`DELETE FROM articles WHERE id = $1`, id); err != nil {
		return nil, err
	}
	return 204, nil
}

// article answers the article whose column (slug or id) is key.
func article(api *host.API, db *sql.DB, column string, key any) (any, error) {
	var doc string
	err := db.QueryRow(`SELECT `+readerArticle+` FROM article_docs d WHERE d.`+column+` = $2`, viewer(api), key).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, host.NewError(404, "not_found", "article not found")
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"article": json.RawMessage(doc)}, nil
}

// ownArticle returns the id of the article of the path if the reader
// wrote it: else 401 without a token, 404 for no such article, 403 for
// someone else's.
func ownArticle(api *host.API, db *sql.DB) (int64, error) {
	me := viewer(api)
	if me == 0 {
		return 0, host.NewError(401, "unauthorized", "changing an article needs a token")
	}
	var id, author int64
	err := db.QueryRow(`SELECT id, author_id FROM articles WHERE slug = $1`, api.Param("slug")).Scan(&id, &author)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return 0, host.NewError(404, "not_found", "article not found")
	case err != nil:
		return 0, err
	case author != me:
		return 0, host.NewError(403, "forbidden", "only the author may change an article")
	}
	return id, nil
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
