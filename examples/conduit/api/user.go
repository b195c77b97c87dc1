//go:build ignore

// GET /api/user answers the user of the token; PUT /api/user changes it.
package main

import (
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/zealgo/zealgo/examples/conduit/lib/auth"
	"github.com/zealgo/zealgo/host"
)

var middleware = []string{"jwt:HS256,env=CONDUIT_JWT_SECRET"}

// userUpdate holds the fields to change: a member left out is kept.
type userUpdate struct {
	User struct {
		Username *string `json:"username" validate:"omitnil,min=1,max=64"`
		Email    *string `json:"email" validate:"omitnil,email"`
		Password *string `json:"password" validate:"omitnil,min=1,max=72"`
		Bio      *string `json:"bio"`
		Image    *string `json:"image"`
	} `json:"user"`
}

var get = func(api *host.API, db *sql.DB) (any, error) {
	return current(api, db)
}

var put = func(api *host.API, db *sql.DB) (any, error) {
	var in userUpdate
	if err := api.Bind(&in); err != nil {
		return nil, err
	}
	u := in.User
	var hash *string
	if u.Password != nil {
		h, err := auth.HashPassword(*u.Password)
		if err != nil {
			return nil, err
		}
		hash = &h
	}
	_, err := db.Exec(`UPDATE users SET username = coalesce($1, username), email = coalesce($2, email),
		password_hash = coalesce($3, password_hash), bio = iif($4, $5, bio), image = iif($6, $7, image) WHERE id = $8`,
		u.Username, u.Email, hash, u.Bio != nil, u.Bio, u.Image != nil, u.Image, viewer(api))
	if err != nil && strings.Contains(err.Error(), "users.email") {
		return nil, host.NewError(422, "taken", "email has already been taken")
	}
	if err != nil && strings.Contains(err.Error(), "users.username") {
		return nil, host.NewError(422, "taken", "username has already been taken")
	}
	if err != nil {
		return nil, err
	}
	return current(api, db)
}

// current answers the token's user, with the token.
func current(api *host.API, db *sql.DB) (any, error) {
	var username, email string
	var bio, image sql.NullString
	err := db.QueryRow(`SELECT username, email, bio, image FROM users WHERE id = $1`, viewer(api)).
		Scan(&username, &email, &bio, &image)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, host.NewError(401, "unauthorized", "the token's user does not exist")
	}
	if err != nil {
		return nil, err
	}
	token, _ := api.BearerToken()
	return map[string]any{"user": map[string]any{"username": username, "email": email,
		"token": token, "bio": nullable(bio), "image": nullable(image)}}, nil
}

// viewer is the id of the user whose token the jwt alias verified.
func viewer(api *host.API) int64 {
	sub, _ := api.Claims()["sub"].(string)
	id, _ := strconv.ParseInt(sub, 10, 64)
	return id
}

// nullable is s for JSON: null when NULL.
func nullable(s sql.NullString) any {
	if !s.Valid {
		return nil
	}
	return s.String
}
