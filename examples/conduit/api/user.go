//go:build ignore

// GET /api/user answers the user of the token; PUT /api/user changes it.
package main

import (
	"database/sql"
	"errors"
	"sort"
	"strconv"
	"strings"

	"github.com/zealgo/zealgo/host"
)

// tokenKey names the key that signs the tokens the jwt alias verifies.
const tokenKey = "HS256,env=CONDUIT_JWT_SECRET"

var middleware = []string{"jwt:" + tokenKey}

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
		return invalid(api, err)
	}
	u := in.User
	id := viewer(api)
	hash := (*string)(nil)
	if u.Password != nil {
		h, err := host.HashPassword(*u.Password)
		if err != nil {
			return nil, err
		}
		hash = &h
	}
	_, err := db.Exec(`UPDATE users SET username = coalesce($1, username), email = coalesce($2, email),
		password_hash = coalesce($3, password_hash), bio = iif($4, $5, bio), image = iif($6, $7, image) WHERE id = $8`,
		u.Username, u.Email, hash, u.Bio != nil, u.Bio, u.Image != nil, u.Image, id)
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return fail(api, 422, uniqueField(err.Error())+" has already been taken"), nil
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
		return fail(api, 401, "the token's user does not exist"), nil
	}
	if err != nil {
		return nil, err
	}
	token, _ := api.BearerToken()
	return map[string]any{"user": map[string]any{"username": username, "email": email,
		"token": token, "bio": nullable(bio), "image": nullable(image)}}, nil
}

// uniqueField names the column of a UNIQUE constraint failure.
func uniqueField(msg string) string {
	if strings.Contains(msg, "users.email") {
		return "email"
	}
	return "username"
}

// viewer is the id of the user whose token the jwt alias verified, 0
// without one.
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
