package check_test

import (
	"testing"

	"github.com/zealgo/zealgo/interp/check"
)

// TestUnlinkedMajorVersion: a package of a major version path (…/pgx/v5,
// named pgx) that the binary does not link is named once, at its import;
// its uses are no further errors.
func TestUnlinkedMajorVersion(t *testing.T) {
	src := "//go:build ignore\n\npackage main\n\nimport \"github.com/jackc/pgx/v5\"\n\n" +
		"var f = func() any { c, err := pgx.ParseConfig(\"\"); return []any{c, err} }\n"
	r := check.New().File("api/x.go", []byte(src))
	if len(r.Diagnostics) != 1 || r.Diagnostics[0].Rule != "not-linked" {
		t.Fatalf("diagnostics %v, want the not-linked import alone", r.Diagnostics)
	}
}
