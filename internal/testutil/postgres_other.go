//go:build !linux

package testutil

import "testing"

// Postgres starts a PostgreSQL server for the test on Linux (see
// postgres.go); elsewhere the test is skipped.
func Postgres(t testing.TB) string {
	t.Helper()
	t.Skip("skipping: the PostgreSQL tests start Debian's server and run on Linux only")
	return ""
}
