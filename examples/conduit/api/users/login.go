//go:build ignore

// POST /api/users/login answers the user whose email and password these
// are, with a new token.
package main

import (
	"database/sql"
	"errors"

	"github.com/zealgo/zealgo/examples/conduit/lib/auth"
	"github.com/zealgo/zealgo/host"
)

type credentials struct {
	User struct {
		Email    string `json:"email" validate:"required"`
		Password string `json:"password" validate:"required"`
	} `json:"user"`
}

var post = func(api *host.API, db *sql.DB) (any, error) {
	var in credentials
	if err := api.Bind(&in); err != nil {
		return nil, err
	}
	var id int64
	var hash, username, email string
	var bio, image sql.NullString
	err := db.QueryRow(`SELECT id, password_hash, username, email, bio, image FROM users WHERE email = $1`, in.User.Email).
		Scan(&id, &hash, &username, &email, &bio, &image)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	// An unknown email costs the same bcrypt check as a wrong password.
	if !auth.CheckPassword(hash, in.User.Password) {
		return nil, host.NewError(401, "unauthorized", "email or password is invalid")
	}
	token, err := auth.Token(id)
	if err != nil {
		return nil, err
	}
	return map[string]any{"user": map[string]any{"username": username, "email": email,
		"token": token, "bio": nullable(bio), "image": nullable(image)}}, nil
}

// nullable is s for JSON: null when NULL.
func nullable(s sql.NullString) any {
	if !s.Valid {
		return nil
	}
	return s.String
}
