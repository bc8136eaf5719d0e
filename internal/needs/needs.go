// Package needs decides what a test does when a real component it needs
// (PostgreSQL, ffmpeg, Chromium) is missing: on a developer's machine it
// skips with one line naming the Debian package to install, so `go test
// ./...` passes with only Go; under CI (the CI variable is set) it fails, so
// a component that should be there is never silently skipped.
package needs

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// Component ends the test when err says the component what (such as
// "PostgreSQL") cannot be found or started: a skip naming the Debian
// package pkg when CI is not set, a failure with err when it is. A nil err
// does nothing.
func Component(tb testing.TB, what, pkg string, err error) {
	tb.Helper()
	if err == nil {
		return
	}
	if os.Getenv("CI") == "" {
		tb.Skip(SkipMessage(what, pkg))
	}
	tb.Fatalf("%s is needed and CI is set: %v (CI installs Debian's %s package)", what, err, pkg)
}

// SkipMessage is the one line a skipped test prints.
func SkipMessage(what, pkg string) string {
	return fmt.Sprintf("%s not found: install Debian's %s package (apt-get install %s) to run this test", what, pkg, pkg)
}

// Program returns the path of the program name, from Debian's package pkg,
// ending the test as [Component] does when it is not in PATH.
func Program(tb testing.TB, name, pkg string) string {
	tb.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		Component(tb, name, pkg, err)
	}
	return path
}
