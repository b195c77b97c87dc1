package conduit_test

import (
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// step is one request of the scenario and what its answer must hold.
type step struct {
	method, path string
	// as is the user whose token goes in "Authorization: Token ...": ""
	// for none, "forged" for a token signed with another key.
	as     string
	body   string
	header map[string]string // more request headers
	status int
	// wantHeader maps a response header to its value.
	wantHeader map[string]string
	// want maps a path in the JSON answer ("user.token", "articles.0.slug")
	// to the JSON text of its value, "~regexp" that text must match, or
	// "!" for a member that must be absent.
	want map[string]string
	// keep stores values of the answer for later steps: a name to a path.
	// {{name}} in a later path or body is the value.
	keep map[string]string
}

// frontEnd is the origin of a front end allowed to call the API.
const frontEnd = "http://localhost:4200"

// isoTime is the timestamp format RealWorld's suite checks.
const isoTime = `~^"\d{4,}-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-5]\d\.\d+(?:[+-][0-2]\d:[0-5]\d|Z)"$`

// forged is an HS256 token with "sub":"1" signed with another key.
const forged = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.2vnCkX8_0eZ7xaYsDGGXk7ZVqTa2tKNwLJ0ucBwlmtw"

// spec is the scenario: every endpoint of the RealWorld API spec, with
// the answers it gives to a reader with and without a token, and its
// 401, 403, 404 and 422 answers.
var spec = []step{
	// Registration and log-in.
	{method: "POST", path: "/users", body: `{"user":{"username":"ann","email":"ann@example.com","password":" pass <word> "}}`, status: 201,
		want: map[string]string{"user.username": `"ann"`, "user.email": `"ann@example.com"`, "user.bio": "null", "user.image": "null", "user.token": `~^"[\w-]+\.[\w-]+\.[\w-]+"$`},
		keep: map[string]string{"ann": "user.token"}},
	{method: "POST", path: "/users", body: `{"user":{"username":"bob","email":"bob@example.com","password":"bobpass"}}`, status: 201,
		keep: map[string]string{"bob": "user.token"}},
	{method: "POST", path: "/users", body: `{"user":{"username":"ann","email":"ANN@example.com","password":"x"}}`, status: 422,
		want: map[string]string{"errors.body": `["username and email have already been taken"]`}},
	{method: "POST", path: "/users", body: `{"user":{"username":"ann","email":"ann2@example.com","password":"x"}}`, status: 422,
		want: map[string]string{"errors.body": `["username has already been taken"]`}},
	{method: "POST", path: "/users", body: `{"user":{"username":"cy","email":"not an email"}}`, status: 422,
		want: map[string]string{"errors.body": `~"user.email must be a valid email address","user.password is a required field"`}},
	{method: "POST", path: "/users", body: `{"user":`, status: 400, want: map[string]string{"errors.body.0": `~.`, "errors.body.1": "!"}},
	// A front end on another origin (serve --allow-origin): its preflight,
	// then its POST, which the cross-origin protection lets by; another
	// origin's POST is refused.
	{method: "OPTIONS", path: "/users", header: map[string]string{"Origin": frontEnd, "Access-Control-Request-Method": "POST",
		"Access-Control-Request-Headers": "content-type,authorization"}, status: 204,
		wantHeader: map[string]string{"Access-Control-Allow-Origin": frontEnd}},
	{method: "POST", path: "/users", header: map[string]string{"Origin": frontEnd, "Sec-Fetch-Site": "cross-site"}, status: 201,
		body:       `{"user":{"username":"cy","email":"cy@example.com","password":"cypass"}}`,
		wantHeader: map[string]string{"Access-Control-Allow-Origin": frontEnd}},
	{method: "POST", path: "/users", header: map[string]string{"Origin": "https://elsewhere.example", "Sec-Fetch-Site": "cross-site"}, status: 403,
		body: `{"user":{"username":"dee","email":"dee@example.com","password":"deepass"}}`, want: map[string]string{"errors.body.0": `~.`}},
	{method: "POST", path: "/users/login", body: `{"user":{"email":"ann@example.com","password":" pass <word> "}}`, status: 200,
		want: map[string]string{"user.username": `"ann"`, "user.bio": "null", "user.token": `~\.`}, keep: map[string]string{"ann": "user.token"}},
	{method: "POST", path: "/users/login", body: `{"user":{"email":"ann@example.com","password":"pass <word>"}}`, status: 401,
		want: map[string]string{"errors.body": `["email or password is invalid"]`}},
	{method: "POST", path: "/users/login", body: `{"user":{"email":"nobody@example.com","password":"x"}}`, status: 401,
		want: map[string]string{"errors.body": `["email or password is invalid"]`}},
	{method: "POST", path: "/users/login", body: `{"user":{"email":"ann@example.com"}}`, status: 422,
		want: map[string]string{"errors.body": `["user.password is a required field"]`}},

	// The current user.
	{method: "GET", path: "/user", as: "ann", status: 200,
		want: map[string]string{"user.username": `"ann"`, "user.email": `"ann@example.com"`, "user.token": `"{{ann}}"`}},
	{method: "GET", path: "/user", status: 401, want: map[string]string{"errors.body": `["this endpoint needs a token: send Authorization: Bearer \u003ctoken\u003e"]`},
		wantHeader: map[string]string{"WWW-Authenticate": `Bearer realm="zealgo"`}},
	{method: "GET", path: "/user", as: "forged", status: 401, want: map[string]string{"errors.body.0": `~signature is invalid`}},
	{method: "PUT", path: "/user", as: "ann", body: `{"user":{"bio":"I <b>like</b> dragons  ","image":"https://example.com/ann.png"}}`, status: 200,
		want: map[string]string{"user.bio": `"I \u003cb\u003elike\u003c/b\u003e dragons  "`, "user.image": `"https://example.com/ann.png"`, "user.email": `"ann@example.com"`}},
	{method: "PUT", path: "/user", as: "ann", body: `{"user":{"email":"bob@example.com"}}`, status: 422,
		want: map[string]string{"errors.body": `["email has already been taken"]`}},
	{method: "PUT", path: "/user", as: "ann", body: `{"user":{"email":"nope"}}`, status: 422},
	{method: "PUT", path: "/user", as: "ann", body: `{"user":{"password":"new pass"}}`, status: 200},
	{method: "POST", path: "/users/login", body: `{"user":{"email":"ann@example.com","password":" pass <word> "}}`, status: 401},
	{method: "POST", path: "/users/login", body: `{"user":{"email":"ann@example.com","password":"new pass"}}`, status: 200},
	{method: "PUT", path: "/user", body: `{"user":{"bio":"x"}}`, status: 401},

	// Profiles.
	{method: "GET", path: "/profiles/bob", status: 200,
		want: map[string]string{"profile": `{"username":"bob","bio":null,"image":null,"following":false}`}},
	{method: "POST", path: "/profiles/bob/follow", as: "ann", status: 200, want: map[string]string{"profile.following": "true", "profile.username": `"bob"`}},
	{method: "GET", path: "/profiles/bob", as: "ann", status: 200, want: map[string]string{"profile.following": "true"}},
	{method: "GET", path: "/profiles/bob", as: "bob", status: 200, want: map[string]string{"profile.following": "false"}},
	{method: "POST", path: "/profiles/bob/follow", status: 401},
	{method: "POST", path: "/profiles/nobody/follow", as: "ann", status: 404},
	{method: "GET", path: "/profiles/nobody", status: 404, want: map[string]string{"errors.body": `["profile not found"]`}},

	// Articles: create, read, list, feed.
	{method: "POST", path: "/articles", as: "bob", status: 201,
		body: `{"article":{"title":"How to train your dragon","description":"Ever wonder how?","body":"You have to <b>believe</b>  ","tagList":["training","dragons"]}}`,
		want: map[string]string{"article.slug": `"how-to-train-your-dragon"`, "article.title": `"How to train your dragon"`,
			"article.body": `"You have to \u003cb\u003ebelieve\u003c/b\u003e  "`, "article.tagList": `["dragons","training"]`,
			"article.createdAt": isoTime, "article.updatedAt": isoTime, "article.favorited": "false", "article.favoritesCount": "0",
			"article.author": `{"username":"bob","bio":null,"image":null,"following":false}`},
		keep: map[string]string{"slug": "article.slug"}},
	{method: "POST", path: "/articles", as: "bob", status: 201,
		body: `{"article":{"title":"How to train your dragon","description":"Again","body":"b"}}`,
		want: map[string]string{"article.slug": `"how-to-train-your-dragon-2"`, "article.tagList": "[]"}, keep: map[string]string{"slug2": "article.slug"}},
	{method: "POST", path: "/articles", as: "ann", status: 201,
		body: `{"article":{"title":"Ann's first","description":"d","body":"b","tagList":["coffee"]}}`,
		want: map[string]string{"article.slug": `"ann-s-first"`}},
	{method: "POST", path: "/articles", as: "bob", body: `{"article":{"description":"d","body":"b"}}`, status: 422,
		want: map[string]string{"errors.body": `["article.title is a required field"]`}},
	{method: "POST", path: "/articles", body: `{"article":{"title":"t","description":"d","body":"b"}}`, status: 401},
	{method: "GET", path: "/articles/{{slug}}", status: 200,
		want: map[string]string{"article.slug": `"{{slug}}"`, "article.author.following": "false", "article.body": `~believe`}},
	{method: "GET", path: "/articles/{{slug}}", as: "ann", status: 200, want: map[string]string{"article.author.following": "true"}},
	{method: "GET", path: "/articles/no-such-article", status: 404, want: map[string]string{"errors.body": `["article not found"]`}},
	{method: "GET", path: "/articles", status: 200,
		want: map[string]string{"articlesCount": "3", "articles.0.slug": `"ann-s-first"`, "articles.2.slug": `"{{slug}}"`,
			"articles.2.body": "!", "articles.2.createdAt": isoTime, "articles.2.tagList": `["dragons","training"]`}},
	{method: "GET", path: "/articles?tag=dragons", status: 200, want: map[string]string{"articlesCount": "1", "articles.0.slug": `"{{slug}}"`}},
	{method: "GET", path: "/articles?author=bob", as: "ann", status: 200,
		want: map[string]string{"articlesCount": "2", "articles.0.slug": `"{{slug2}}"`, "articles.0.author.following": "true"}},
	{method: "GET", path: "/articles?author=nobody", status: 200, want: map[string]string{"articlesCount": "0", "articles": "[]"}},
	{method: "GET", path: "/articles?limit=1&offset=1", status: 200,
		want: map[string]string{"articlesCount": "3", "articles": `~^\[\{[^\[]*\[[^\]]*\][^\]]*\]$`, "articles.0.slug": `"{{slug2}}"`}},
	{method: "GET", path: "/articles?limit=abc", status: 400, want: map[string]string{"errors.body": `["limit must be a whole number of 64 bits"]`}},
	{method: "GET", path: "/articles?limit=-1", status: 422, want: map[string]string{"errors.body.0": `~limit`}},
	{method: "GET", path: "/no-such-endpoint", status: 404, want: map[string]string{"errors.body.0": `~.`}},
	{method: "DELETE", path: "/tags", status: 405, want: map[string]string{"errors.body.0": `~.`}},
	{method: "GET", path: "/articles", as: "forged", status: 401},
	{method: "GET", path: "/articles/feed", as: "ann", status: 200,
		want: map[string]string{"articlesCount": "2", "articles.0.slug": `"{{slug2}}"`, "articles.1.slug": `"{{slug}}"`, "articles.0.body": "!"}},
	{method: "GET", path: "/articles/feed?limit=1", as: "ann", status: 200, want: map[string]string{"articlesCount": "2", "articles.1": "!"}},
	{method: "GET", path: "/articles/feed", as: "bob", status: 200, want: map[string]string{"articlesCount": "0", "articles": "[]"}},
	{method: "GET", path: "/articles/feed", status: 401},

	// Articles: update, favorite.
	{method: "PUT", path: "/articles/{{slug}}", as: "ann", body: `{"article":{"body":"mine now"}}`, status: 403},
	{method: "PUT", path: "/articles/{{slug}}", body: `{"article":{"body":"x"}}`, status: 401},
	{method: "PUT", path: "/articles/no-such-article", as: "bob", body: `{"article":{"body":"x"}}`, status: 404},
	{method: "PUT", path: "/articles/{{slug}}", as: "bob", body: `{"article":{"body":"With two hands"}}`, status: 200,
		want: map[string]string{"article.body": `"With two hands"`, "article.slug": `"{{slug}}"`, "article.description": `"Ever wonder how?"`, "article.updatedAt": isoTime}},
	{method: "PUT", path: "/articles/{{slug}}", as: "bob", body: `{"article":{"title":"Dragons, trained"}}`, status: 200,
		want: map[string]string{"article.slug": `"dragons-trained"`, "article.title": `"Dragons, trained"`}, keep: map[string]string{"slug": "article.slug"}},
	{method: "PUT", path: "/articles/{{slug}}", as: "bob", body: `{"article":{"title":""}}`, status: 422},
	{method: "POST", path: "/articles/{{slug}}/favorite", as: "ann", status: 200,
		want: map[string]string{"article.favorited": "true", "article.favoritesCount": "1"}},
	{method: "POST", path: "/articles/{{slug}}/favorite", as: "ann", status: 200, want: map[string]string{"article.favoritesCount": "1"}},
	{method: "GET", path: "/articles?favorited=ann", status: 200,
		want: map[string]string{"articlesCount": "1", "articles.0.favorited": "false", "articles.0.favoritesCount": "1"}},
	{method: "GET", path: "/articles?favorited=ann", as: "ann", status: 200, want: map[string]string{"articles.0.favorited": "true"}},
	{method: "POST", path: "/articles/{{slug}}/favorite", status: 401},
	{method: "POST", path: "/articles/no-such-article/favorite", as: "ann", status: 404},
	{method: "DELETE", path: "/articles/{{slug}}/favorite", as: "ann", status: 200,
		want: map[string]string{"article.favorited": "false", "article.favoritesCount": "0"}},
	{method: "GET", path: "/articles?favorited=ann", status: 200, want: map[string]string{"articlesCount": "0"}},

	// Comments.
	{method: "POST", path: "/articles/{{slug}}/comments", as: "ann", body: `{"comment":{"body":"Thank you <i>so</i> much!"}}`, status: 200,
		want: map[string]string{"comment.id": `~^\d+$`, "comment.body": `"Thank you \u003ci\u003eso\u003c/i\u003e much!"`,
			"comment.createdAt": isoTime, "comment.updatedAt": isoTime, "comment.author.username": `"ann"`},
		keep: map[string]string{"comment": "comment.id"}},
	{method: "POST", path: "/articles/{{slug}}/comments", as: "bob", body: `{"comment":{"body":"You're welcome"}}`, status: 200,
		keep: map[string]string{"comment2": "comment.id"}},
	{method: "POST", path: "/articles/{{slug}}/comments", as: "ann", body: `{"comment":{}}`, status: 422,
		want: map[string]string{"errors.body": `["comment.body is a required field"]`}},
	{method: "POST", path: "/articles/{{slug}}/comments", body: `{"comment":{"body":"x"}}`, status: 401},
	{method: "POST", path: "/articles/no-such-article/comments", as: "ann", body: `{"comment":{"body":"x"}}`, status: 404},
	{method: "GET", path: "/articles/{{slug}}/comments", status: 200,
		want: map[string]string{"comments.0.id": "{{comment}}", "comments.1.id": "{{comment2}}", "comments.2": "!", "comments.1.author.following": "false"}},
	{method: "GET", path: "/articles/{{slug}}/comments", as: "ann", status: 200, want: map[string]string{"comments.1.author.following": "true"}},
	{method: "GET", path: "/articles/no-such-article/comments", status: 404},
	{method: "DELETE", path: "/articles/{{slug}}/comments/{{comment}}", as: "bob", status: 403},
	{method: "DELETE", path: "/articles/{{slug}}/comments/{{comment}}", status: 401},
	{method: "DELETE", path: "/articles/{{slug2}}/comments/{{comment}}", as: "ann", status: 404},
	{method: "DELETE", path: "/articles/{{slug}}/comments/{{comment}}", as: "ann", status: 204},
	{method: "DELETE", path: "/articles/{{slug}}/comments/{{comment}}", as: "ann", status: 404},
	{method: "GET", path: "/articles/{{slug}}/comments", status: 200, want: map[string]string{"comments.0.id": "{{comment2}}", "comments.1": "!"}},

	// Tags, unfollowing, deleting.
	{method: "GET", path: "/tags", status: 200, want: map[string]string{"tags": `["coffee","dragons","training"]`}},
	{method: "DELETE", path: "/profiles/bob/follow", as: "ann", status: 200, want: map[string]string{"profile.following": "false"}},
	{method: "GET", path: "/articles/feed", as: "ann", status: 200, want: map[string]string{"articlesCount": "0"}},
	{method: "DELETE", path: "/profiles/bob/follow", status: 401},
	{method: "DELETE", path: "/articles/{{slug}}", as: "ann", status: 403},
	{method: "DELETE", path: "/articles/{{slug}}", status: 401},
	{method: "DELETE", path: "/articles/{{slug}}", as: "bob", status: 204},
	{method: "GET", path: "/articles/{{slug}}", status: 404},
	{method: "DELETE", path: "/articles/{{slug}}", as: "bob", status: 404},
	{method: "GET", path: "/articles/{{slug}}/comments", status: 404},
	{method: "GET", path: "/tags", status: 200, want: map[string]string{"tags": `["coffee"]`}},
}

// runSpec sends the scenario to the API at base and checks each answer.
func runSpec(t *testing.T, base string) {
	t.Helper()
	vars := map[string]string{"forged": forged}
	for i, s := range spec {
		path, body := expand(s.path, vars), expand(s.body, vars)
		name := strconv.Itoa(i+1) + " " + s.method + " " + path
		auth := ""
		if s.as != "" {
			auth = "Token " + vars[s.as]
		}
		status, hdr, got, err := sendWith(s.method, base+path, auth, body, s.header)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if status != s.status {
			t.Errorf("%s: %d %s, want %d", name, status, got, s.status)
			continue
		}
		for k, want := range s.wantHeader {
			if hdr.Get(k) != want {
				t.Errorf("%s: %s: %q, want %q", name, k, hdr.Get(k), want)
			}
		}
		var doc any
		if status != 204 && s.method != "OPTIONS" && json.Unmarshal([]byte(got), &doc) != nil {
			t.Errorf("%s: the answer is not JSON: %s", name, got)
			continue
		}
		for p, want := range s.want {
			if problem := check(doc, p, expand(want, vars)); problem != "" {
				t.Errorf("%s: %s: %s\n%s", name, p, problem, got)
			}
		}
		for k, p := range s.keep {
			v, ok := at(doc, p)
			if !ok {
				t.Fatalf("%s: no %s to keep in %s", name, p, got)
			}
			if str, isStr := v.(string); isStr {
				vars[k] = str
			} else {
				b, _ := json.Marshal(v)
				vars[k] = string(b)
			}
		}
	}
}

// check says what is wrong with the value at path p of doc, or "".
func check(doc any, p, want string) string {
	v, ok := at(doc, p)
	if want == "!" {
		if ok {
			return "present, want absent"
		}
		return ""
	}
	if !ok {
		return "absent"
	}
	b, _ := json.Marshal(v)
	got := string(b)
	if re, isRe := strings.CutPrefix(want, "~"); isRe {
		if !regexp.MustCompile(re).MatchString(got) {
			return got + " does not match " + re
		}
		return ""
	}
	var w any
	if json.Unmarshal([]byte(want), &w) != nil {
		return "the test's want is not JSON: " + want
	}
	if wb, _ := json.Marshal(w); string(wb) != got {
		return got + ", want " + want
	}
	return ""
}

// at returns the value at the dotted path p of doc ("articles.0.slug").
func at(doc any, p string) (any, bool) {
	v := doc
	for _, k := range strings.Split(p, ".") {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[k]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// expand replaces each {{name}} of s by its value.
func expand(s string, vars map[string]string) string {
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{{"+k+"}}", v)
	}
	return s
}

// send sends one request, with a JSON body if body is not empty.
func send(method, url, auth, body string) (int, string, error) {
	status, _, got, err := sendWith(method, url, auth, body, nil)
	return status, got, err
}

// sendWith is send with more headers, returning the answer's.
func sendWith(method, url, auth, body string, header map[string]string) (int, http.Header, string, error) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return 0, nil, "", err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b), err
}
