-- The table of the tier benchmark's database endpoint (api/bench/items.go):
-- 100 rows, the same every run.
CREATE TABLE items (
	id    INTEGER PRIMARY KEY,
	name  TEXT NOT NULL,
	score REAL NOT NULL
);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100)
INSERT INTO items (id, name, score) SELECT i, 'item ' || i, i * 1.5 FROM n;
