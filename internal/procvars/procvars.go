// Package procvars reads the KEY=VALUE lines a command prints before it
// serves, such as the reference server's MEDIAGEN_BASE_URL and
// MEDIAGEN_API_KEY, for the load generators that start it.
package procvars

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// Read reads KEY=VALUE lines from out until it has a value for each of
// names, within timeout or until ctx ends. It stops reading once it has
// them: the command prints nothing more once it serves, so another read
// would block.
func Read(ctx context.Context, out io.Reader, timeout time.Duration, names ...string) (map[string]string, error) {
	type answer struct {
		vars map[string]string
		err  error
	}
	done := make(chan answer, 1)
	go func() {
		vars := map[string]string{}
		sc := bufio.NewScanner(out)
		for !hasAll(vars, names) && sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), "="); ok {
				vars[k] = v
			}
		}
		if !hasAll(vars, names) {
			done <- answer{err: fmt.Errorf("the server exited before printing %s", strings.Join(names, ", "))}
			return
		}
		done <- answer{vars: vars}
	}()
	select {
	case a := <-done:
		return a.vars, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(timeout):
		return nil, fmt.Errorf("the server printed no %s within %s", strings.Join(names, ", "), timeout)
	}
}

func hasAll(vars map[string]string, names []string) bool {
	for _, k := range names {
		if vars[k] == "" {
			return false
		}
	}
	return true
}
