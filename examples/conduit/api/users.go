//go:build ignore

// POST /api/users registers a user and answers it with a token.
package main

import (
	"database/sql"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/zealgo/zealgo/host"
)

// tokenKey names the key that signs the tokens the jwt alias verifies.
const tokenKey = "HS256,env=CONDUIT_JWT_SECRET"

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
		return invalid(api, err)
	}
	u := in.User
	if taken := takenNames(db, u.Username, u.Email); len(taken) > 0 {
		return fail(api, 422, taken...), nil
	}
	hash, err := host.HashPassword(u.Password)
	if err != nil {
		return nil, err
	}
	var id int64
	err = db.QueryRow(`INSERT INTO users (username, email, password_hash) VALUES ($1, $2, $3) RETURNING id`,
		u.Username, u.Email, hash).Scan(&id)
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return fail(api, 422, takenNames(db, u.Username, u.Email)...), nil
	}
	if err != nil {
		return nil, err
	}
	token, err := host.SignToken(tokenKey, map[string]any{
		"sub": strconv.FormatInt(id, 10), "exp": time.Now().Add(30 * 24 * time.Hour).Unix()})
	if err != nil {
		return nil, err
	}
	api.Res.WriteHeader(201)
	return map[string]any{"user": map[string]any{
		"username": u.Username, "email": u.Email, "token": token, "bio": nil, "image": nil}}, nil
}

// takenNames says which of the username and the email another user has.
func takenNames(db *sql.DB, username, email string) []string {
	var taken []string
	var n int
	if db.QueryRow(`SELECT count(*) FROM users WHERE username = $1`, username).Scan(&n) == nil && n > 0 {
		taken = append(taken, "username has already been taken")
	}
	if db.QueryRow(`SELECT count(*) FROM users WHERE email = $1`, email).Scan(&n) == nil && n > 0 {
		taken = append(taken, "email has already been taken")
	}
	return taken
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
