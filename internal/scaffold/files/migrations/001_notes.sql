-- The table of lib/notes. zealgo runs each .sql file of migrations/ once, in
-- name order, at start-up (or with `zealgo migrate`): add a new file
-- (002_...) for every change, never edit one that ran.
-- Written for SQLite, the default; on PostgreSQL (--db postgres://...) the
-- id column is BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY.
CREATE TABLE notes (
	id    INTEGER PRIMARY KEY,
	title TEXT NOT NULL
);
