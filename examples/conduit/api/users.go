//go:build ignore

// POST /api/users registers a user and answers it with a token.
package main

import (
	"database/sql"
	"strings"

	"github.com/zealgo/zealgo/examples/conduit/lib/auth"
	"github.com/zealgo/zealgo/host"
)

type registration struct {
	User struct {
		Username string `json:"username" validate:"required,max=64"`
		Email    string `json:"email" validate:"required,email"`
		Password string `json:"password" validate:"required,max=72"`
	} `json:"user"`
}

var post = func(api *host.API, db *sql.DB) (any, error) {
	var in registration
	if err := api.Bind(&in); err != nil {
		return nil, err // 422 with the failing fields (setup.go shapes it)
	}
	u := in.User
	if err := taken(db, u.Username, u.Email); err != nil {
		return nil, err
	}
	hash, err := auth.HashPassword(u.Password)
	if err != nil {
		return nil, err
	}
	var id int64
	err = db.QueryRow(`INSERT INTO users (username, email, password_hash) VALUES ($1, $2, $3) RETURNING id`,
		u.Username, u.Email, hash).Scan(&id)
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		err = taken(db, u.Username, u.Email) // registered meanwhile
	}
	if err != nil {
		return nil, err
	}
	token, err := auth.Token(id)
	if err != nil {
		return nil, err
	}
	api.Res.WriteHeader(201)
	return map[string]any{"user": map[string]any{
		"username": u.Username, "email": u.Email, "token": token, "bio": nil, "image": nil}}, nil
}

// taken answers 422 when another user has the username or the email.
func taken(db *sql.DB, username, email string) error {
	var byName, byEmail bool
	err := db.QueryRow(`SELECT EXISTS (SELECT 1 FROM users WHERE username = $1), EXISTS (SELECT 1 FROM users WHERE email = $2)`,
		username, email).Scan(&byName, &byEmail)
	switch {
	case err != nil:
		return err
	case byName && byEmail:
		return host.NewError(422, "taken", "username and email have already been taken")
	case byName:
		return host.NewError(422, "taken", "username has already been taken")
	case byEmail:
		return host.NewError(422, "taken", "email has already been taken")
	}
	return nil
}
