//go:build ignore

// GET /api/tags lists the tags of every article, in order.
package main

import (
	"database/sql"
	"encoding/json"
)

var get = func(db *sql.DB) (any, error) {
	var list string
	err := db.QueryRow(`SELECT json_group_array(name) FROM (SELECT DISTINCT name FROM article_tags ORDER BY name)`).Scan(&list)
	if err != nil {
		return nil, err
	}
	return map[string]any{"tags": json.RawMessage(list)}, nil
}
