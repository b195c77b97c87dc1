//go:build ignore

package main

import (
	"database/sql"

	"github.com/zealgo/zealgo/host"
)

// items serves /api/bench/items, the database endpoint of the tier
// benchmark (bench/tier.sh): the first 20 rows of the table that
// migrations/001_items.sql fills, read from SQLite through the
// application's pool, as a list of objects.
var items = func(api *host.API, db *sql.DB) (any, error) {
	rows, err := db.QueryContext(api.Context(), "SELECT id, name, score FROM items ORDER BY id LIMIT 20")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	list := make([]map[string]any, 0, 20)
	for rows.Next() {
		var id int64
		var name string
		var score float64
		if err := rows.Scan(&id, &name, &score); err != nil {
			return nil, err
		}
		list = append(list, map[string]any{"id": id, "name": name, "score": score})
	}
	return map[string]any{"items": list}, rows.Err()
}
