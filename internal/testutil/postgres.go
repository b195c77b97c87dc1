//go:build linux

package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// Postgres starts a PostgreSQL server of its own for the test and returns
// the URL of its database "postgres" (user zealgo, no password): initdb
// into a new directory under the system's temporary directory, the server
// on a free loopback port with its Unix socket in that directory. The
// server stops, by its PID, and the directory goes when the test ends.
// The programs come from Debian's postgresql package
// (/usr/lib/postgresql/<version>/bin) or from PATH; when they are missing
// the test is skipped, or fails under CI (see NeedProgram). PostgreSQL
// refuses to run as root: as root, the server runs as the user postgres
// (else nobody), which owns the directory.
func Postgres(t testing.TB) string {
	t.Helper()
	bin := postgresBin(t)
	dir, err := os.MkdirTemp("", "zealgo-pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cred := postgresCredential(t, dir)
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
		return cmd
	}
	data := filepath.Join(dir, "data")
	if out, err := run("initdb", "-D", data, "-U", "zealgo", "-A", "trust", "-E", "UTF8", "--no-sync").CombinedOutput(); err != nil {
		t.Fatalf("initdb: %v\n%s", err, out)
	}
	_, port, _ := net.SplitHostPort(FreeAddr(t))
	log := &Buffer{}
	srv := run("postgres", "-D", data, "-k", dir, "-p", port, "-h", "127.0.0.1",
		"-c", "fsync=off", "-c", "max_connections=200")
	srv.Stdout, srv.Stderr = log, log
	if err := srv.Start(); err != nil {
		t.Fatalf("postgres: %v", err)
	}
	done := make(chan struct{})
	go func() { srv.Wait(); close(done) }()
	t.Cleanup(func() { stopPostgres(t, srv, done) })
	deadline := time.Now().Add(30 * time.Second)
	for run("pg_isready", "-q", "-h", "127.0.0.1", "-p", port).Run() != nil {
		select {
		case <-done:
			t.Fatalf("postgres exited:\n%s", log)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("postgres not ready after 30s:\n%s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Sprintf("postgres://zealgo@127.0.0.1:%s/postgres?sslmode=disable", port)
}

// stopPostgres asks the server for a fast shutdown (SIGINT) and kills it
// if it is still there after 10 s.
func stopPostgres(t testing.TB, srv *exec.Cmd, done chan struct{}) {
	srv.Process.Signal(syscall.SIGINT)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Errorf("postgres (pid %d) did not stop within 10s; killing it", srv.Process.Pid)
		srv.Process.Kill()
		<-done
	}
}

// postgresBin returns the directory of initdb, postgres and pg_isready.
func postgresBin(t testing.TB) string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	return filepath.Dir(NeedProgram(t, "initdb", "apt-get install postgresql"))
}

func pgVersion(bin string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(bin)))
	return n
}

// postgresCredential returns the user the server runs as: nil (this
// process's) unless this process is root; then postgres or nobody, made
// owner of dir.
func postgresCredential(t testing.TB, dir string) *syscall.Credential {
	if os.Geteuid() != 0 {
		return nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			t.Fatal(err)
		}
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	t.Fatal("running as root, and neither the user postgres nor nobody exists to run PostgreSQL")
	return nil
}
