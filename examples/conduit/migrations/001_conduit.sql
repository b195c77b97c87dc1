-- Conduit's tables. Times are ISO 8601 UTC text with milliseconds
-- (2026-11-27T01:02:03.456Z), as RealWorld's clients expect them.
CREATE TABLE users (
	id            INTEGER PRIMARY KEY,
	username      TEXT NOT NULL UNIQUE,
	email         TEXT NOT NULL UNIQUE COLLATE NOCASE,
	password_hash TEXT NOT NULL,
	bio           TEXT,
	image         TEXT
);

CREATE TABLE follows (
	follower_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	followee_id INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	PRIMARY KEY (follower_id, followee_id)
);
CREATE INDEX follows_followee ON follows (followee_id);

CREATE TABLE articles (
	id          INTEGER PRIMARY KEY,
	slug        TEXT NOT NULL UNIQUE,
	title       TEXT NOT NULL,
	description TEXT NOT NULL,
	body        TEXT NOT NULL,
	author_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
	updated_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX articles_author ON articles (author_id);

CREATE TABLE article_tags (
	article_id INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
	name       TEXT NOT NULL,
	PRIMARY KEY (article_id, name)
);
CREATE INDEX article_tags_name ON article_tags (name);

CREATE TABLE favorites (
	user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	article_id INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
	PRIMARY KEY (user_id, article_id)
);
CREATE INDEX favorites_article ON favorites (article_id);

CREATE TABLE comments (
	id         INTEGER PRIMARY KEY,
	article_id INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
	author_id  INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
	body       TEXT NOT NULL,
	created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
	updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
CREATE INDEX comments_article ON comments (article_id);

-- The JSON documents the API answers, written once here for every
-- handler. What depends on who asks ("following", "favorited") is false
-- in the view; the handlers set it for the reader with json_set.
CREATE VIEW profile_docs AS
SELECT id, username,
	json_object('username', username, 'bio', bio, 'image', image, 'following', json('false')) AS doc
FROM users;

CREATE VIEW article_docs AS
SELECT a.id, a.slug, a.author_id,
	json_object(
		'slug', a.slug,
		'title', a.title,
		'description', a.description,
		'body', a.body,
		'tagList', (SELECT json_group_array(name) FROM (SELECT name FROM article_tags WHERE article_id = a.id ORDER BY name)),
		'createdAt', a.created_at,
		'updatedAt', a.updated_at,
		'favorited', json('false'),
		'favoritesCount', (SELECT count(*) FROM favorites WHERE article_id = a.id),
		'author', json(p.doc)) AS doc
FROM articles a JOIN profile_docs p ON p.id = a.author_id;

CREATE VIEW comment_docs AS
SELECT c.id, c.article_id, c.author_id,
	json_object(
		'id', c.id,
		'createdAt', c.created_at,
		'updatedAt', c.updated_at,
		'body', c.body,
		'author', json(p.doc)) AS doc
FROM comments c JOIN profile_docs p ON p.id = c.author_id;
