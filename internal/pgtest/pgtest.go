// Package pgtest starts a throwaway PostgreSQL server for the tests of one
// test binary, from the server binaries of Debian's postgresql package
// (initdb, pg_ctl), in a temporary folder reached only through a Unix
// socket, and hands each test a new empty database. Without the binaries a
// test skips, or fails under CI; see package needs.
package pgtest

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"

	"github.com/mediagen/mediagen-go/internal/needs"
)

// DurableEnv names the variable that keeps the engine's default durability
// (a flush to disk at every commit), for benchmarks that must show its
// cost. Without it the server runs with fsync off.
const DurableEnv = "MEDIAGEN_DB_DURABLE"

var (
	once   sync.Once
	server *pgServer
	err    error
	seq    atomic.Int32
)

// errNoBinaries is the failure to find initdb and pg_ctl.
var errNoBinaries = errors.New("no PostgreSQL server binaries: initdb is in none of MEDIAGEN_PG_BIN, /usr/lib/postgresql/*/bin and PATH")

// DSN returns the DSN (for the "pgx" driver) of a new, empty database on the
// server of this test binary, started at the first call. Without the server
// binaries the test skips naming the package to install, or fails under CI;
// a server that is there but does not start fails the test. Under -short
// it skips: starting a server takes seconds.
func DSN(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("starts a PostgreSQL server; runs without -short")
	}
	once.Do(func() { server, err = startPostgres() })
	if errors.Is(err, errNoBinaries) {
		needs.Component(tb, "PostgreSQL", "postgresql", err)
	}
	if err != nil {
		tb.Fatalf("cannot start PostgreSQL: %v", err)
	}
	name := fmt.Sprintf("test_%d", seq.Add(1))
	admin, err := sql.Open("pgx", server.dsn("postgres"))
	if err != nil {
		tb.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE " + name); err != nil {
		tb.Fatalf("creating database %s: %v", name, err)
	}
	return server.dsn(name)
}

// Stop stops the server, if this binary started one, and removes its
// folder. Call it from TestMain after m.Run.
func Stop() error {
	if server == nil {
		return nil
	}
	return server.stop()
}

// pgServer is a throwaway PostgreSQL cluster in a temporary folder, reached
// only through a Unix socket in that folder, so it collides with no other
// server on the machine.
type pgServer struct {
	dir   string   // holds data/, the socket and the log
	pgCtl string   // path of pg_ctl
	as    []string // runs a command as the cluster's owner; empty when we are not root
}

func (s *pgServer) dsn(db string) string {
	return fmt.Sprintf("host=%s port=5432 user=postgres dbname=%s sslmode=disable", s.dir, db)
}

// startPostgres runs initdb and starts the server. PostgreSQL refuses to run
// as root, so as root the folder is handed to the postgres user (or nobody)
// and the commands run as that user through runuser.
func startPostgres() (*pgServer, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mediagen-pg-")
	if err != nil {
		return nil, err
	}
	s := &pgServer{dir: dir, pgCtl: filepath.Join(bin, "pg_ctl")}
	if os.Geteuid() == 0 {
		if s.as, err = runAsOwner(dir); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if out, err := s.run(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync"); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	opts := fmt.Sprintf("-k '%s' -c listen_addresses=''", dir)
	if os.Getenv(DurableEnv) == "" {
		// Durability is of no use to a test and costs it most of its time.
		opts += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
	}
	logFile := filepath.Join(dir, "server.log")
	if out, err := s.run(s.pgCtl, "start", "-D", data, "-l", logFile, "-w", "-t", "60", "-o", opts); err != nil {
		log, _ := os.ReadFile(logFile)
		os.RemoveAll(dir)
		return nil, fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	return s, nil
}

func (s *pgServer) stop() error {
	out, err := s.run(s.pgCtl, "stop", "-D", filepath.Join(s.dir, "data"), "-m", "fast", "-w", "-t", "60")
	if err != nil {
		return fmt.Errorf("pg_ctl stop: %v\n%s", err, out)
	}
	return os.RemoveAll(s.dir)
}

func (s *pgServer) run(name string, args ...string) ([]byte, error) {
	argv := append(append(append([]string(nil), s.as...), name), args...)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = s.dir
	return cmd.CombinedOutput()
}

// runAsOwner gives dir to an unprivileged user and returns the prefix that
// runs a command as that user.
func runAsOwner(dir string) ([]string, error) {
	runuser, err := exec.LookPath("runuser")
	if err != nil {
		return nil, errors.New("running as root, and runuser (util-linux) is not there to run PostgreSQL as another user")
	}
	var u *user.User
	for _, name := range []string{"postgres", "nobody"} {
		if u, err = user.Lookup(name); err == nil {
			break
		}
	}
	if u == nil {
		return nil, errors.New("running as root, and neither user postgres nor nobody exists to run PostgreSQL as")
	}
	uid, err := strconv.Atoi(u.Uid)
	if err != nil {
		return nil, err
	}
	gid, err := strconv.Atoi(u.Gid)
	if err != nil {
		return nil, err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	return []string{runuser, "-u", u.Username, "--"}, nil
}

// postgresBin finds the folder of initdb and pg_ctl: MEDIAGEN_PG_BIN, then
// the newest Debian server package, then PATH.
func postgresBin() (string, error) {
	if dir := os.Getenv("MEDIAGEN_PG_BIN"); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err != nil {
			return "", fmt.Errorf("%w (MEDIAGEN_PG_BIN=%s: %v)", errNoBinaries, dir, err)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return pgVersion(dirs[i]) > pgVersion(dirs[j]) })
	for _, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, "initdb")); err == nil {
			return dir, nil
		}
	}
	initdb, err := exec.LookPath("initdb")
	if err != nil {
		return "", errNoBinaries
	}
	return filepath.Dir(initdb), nil
}

func pgVersion(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}
