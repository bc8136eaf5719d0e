package riverjob_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	riverjob "github.com/mediagen/mediagen-go/river"
)

// proofRequests is the worker processes' log of their requests, one row
// per attempt: route (method and path pattern), cause (the code path that
// sent it, read from the stack), key (of a create) and outcome.
const proofRequests = `CREATE TABLE proof_requests (route text NOT NULL, cause text NOT NULL,
	key text NOT NULL, outcome text NOT NULL)`

// countRequests logs every request a worker's client sends in
// proof_requests, once its outcome is known.
func countRequests(db *sql.DB) client.Option {
	return client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		route, cause, key := requestRoute(req), requestCause(), ""
		if route == "POST /v3/generations" {
			key = createKey(req)
		}
		resp, err := next(req)
		outcome := "transport error" // a dropped connection, before or after the handler ran
		switch {
		case err != nil && req.Context().Err() != nil:
			outcome = "cancelled"
		case err != nil:
		case resp.Header.Get("X-Injected-Fault") != "":
			outcome = fmt.Sprintf("injected %d", resp.StatusCode)
		default:
			outcome = fmt.Sprintf("served %d", resp.StatusCode)
		}
		_, _ = db.ExecContext(context.WithoutCancel(req.Context()),
			`INSERT INTO proof_requests (route, cause, key, outcome) VALUES ($1, $2, $3, $4)`, route, cause, key, outcome)
		return resp, err
	})
}

// requestRoute is the method and path of req with ids left out.
func requestRoute(req *http.Request) string {
	p := req.URL.Path
	switch {
	case !strings.HasPrefix(p, "/v3/"):
		p = "storage"
	case strings.HasPrefix(p, "/v3/generations/"):
		p = "/v3/generations/{id}"
	}
	return req.Method + " " + p
}

// requestCause names the code path that sent a request, from the frames of
// the calling goroutine (the client runs middleware on the caller's).
func requestCause() string {
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(3, pcs)])
	var names []string
	for {
		f, more := frames.Next()
		names = append(names, f.Function)
		if !more {
			break
		}
	}
	has := func(s string) bool {
		for _, n := range names {
			if strings.Contains(n, s) {
				return true
			}
		}
		return false
	}
	switch {
	case has("(*Worker).estimate"):
		return "price list"
	case has("charge.(*Listing") || has("charge.list"):
		return "search (shared listing)"
	case has("charge.Search") && has("charge.sendKeyed") && !has("charge.submit["):
		return "search (key taken over from a dead holder)"
	case has("charge.Search"):
		return "search (after an ambiguous create)"
	case has("charge.submitKeyed") && !has("charge.sendKeyed"):
		return "create: key's id in the journal, GET"
	case has("charge.submit["):
		return "create"
	case has("(*Worker).check"):
		return "check: no event stored"
	case has("(*Worker).finish"):
		return "save"
	}
	return "other"
}

// createKey is the job key at the start of a create's prompt or script;
// it reads the body and puts it back.
func createKey(req *http.Request) string {
	if req.Body == nil {
		return ""
	}
	b, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(b)) // a charging request has no GetBody
	var body struct {
		Args struct{ Prompt, Script string } `json:"args"`
	}
	if json.NewDecoder(bytes.NewReader(b)).Decode(&body) != nil {
		return ""
	}
	f := strings.Fields(body.Args.Prompt + " " + body.Args.Script)
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

// faultStats are the reference server's counts of injected faults.
type faultStats struct {
	Requests      int64 `json:"requests"` // every request, API and storage
	Replaced      int64 `json:"replaced"`
	DroppedBefore int64 `json:"droppedBefore"`
	DroppedAfter  int64 `json:"droppedAfter"`
}

// proofFaults reads the fault counts through the test-control API.
func proofFaults(t *testing.T, control string) faultStats {
	var body struct {
		Stats faultStats `json:"stats"`
	}
	proofControl(t, control, "/faults", &body)
	return body.Stats
}

// workLog is the worker processes' log of their Work calls: whether the
// job had sent its generation before (check) or not (submit), how it
// ended and how long it held the slot.
const workLog = `CREATE TABLE proof_work (job bigint NOT NULL, kind text NOT NULL, result text NOT NULL,
	ms double precision NOT NULL)`

// timed is counting that logs each Work call in proof_work.
type timed struct {
	counting
	db *sql.DB
}

func (w timed) Work(ctx context.Context, job *river.Job[riverjob.Args]) error {
	kind := "submit"
	var one int
	if w.db.QueryRowContext(ctx, `SELECT 1 FROM mediagen_river_generations WHERE job_id = $1`, job.ID).Scan(&one) == nil {
		kind = "check"
	}
	began := time.Now()
	err := w.counting.Work(ctx, job)
	took := time.Since(began)
	var snooze *river.JobSnoozeError
	var cancel *rivertype.JobCancelError
	result := "error"
	switch {
	case err == nil:
		result = "completed"
	case errors.As(err, &snooze):
		result = "snoozed"
	case errors.As(err, &cancel):
		result = "cancelled"
	}
	_, _ = w.db.ExecContext(context.WithoutCancel(ctx), `INSERT INTO proof_work VALUES ($1, $2, $3, $4)`, job.ID, kind, result, took.Seconds()*1000)
	return err
}

// workFigures logs the Work calls by kind and result: how many, and how
// long they held a slot (mean, 95th percentile, total).
func workFigures(t *testing.T, db *sql.DB) {
	rows, err := db.QueryContext(t.Context(), `SELECT kind, result, count(*), avg(ms),
		percentile_cont(0.95) WITHIN GROUP (ORDER BY ms), sum(ms) FROM proof_work GROUP BY 1, 2 ORDER BY 1, 2`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var kind, result string
		var n int
		var mean, p95, sum float64
		require.NoError(t, rows.Scan(&kind, &result, &n, &mean, &p95, &sum))
		t.Logf("  %-7s %-10s %6d calls, %7.1f ms mean, %7.1f ms p95, %6.1f slot-s in all", kind, result, n, mean, p95, sum/1000)
	}
	require.NoError(t, rows.Err())
	var again int
	require.NoError(t, db.QueryRowContext(t.Context(), `SELECT count(*) FROM (SELECT job FROM proof_work
		WHERE result = 'completed' GROUP BY job HAVING count(*) > 1) AS j`).Scan(&again))
	t.Logf("  jobs completed more than once (run again after completing): %d", again)
}

// requestFigures logs the workers' requests by route, cause and outcome,
// and the server's counts between before and after, and returns the HTTP
// attempts at the API per generation (faulted ones included) and the API
// requests the service served (answered by its handlers, not by a fault).
func requestFigures(t *testing.T, db *sql.DB, gens int, before, after faultStats) (attempts, served float64) {
	rows, err := db.QueryContext(t.Context(), `SELECT route, cause, CASE WHEN outcome LIKE 'served%' THEN 'served'
		ELSE outcome END, count(*) FROM proof_requests GROUP BY 1, 2, 3 ORDER BY 1, 2, 3`)
	require.NoError(t, err)
	defer rows.Close()
	var storage int64
	for rows.Next() {
		var route, cause, outcome string
		var n int64
		require.NoError(t, rows.Scan(&route, &cause, &outcome, &n))
		if strings.HasSuffix(route, "storage") {
			storage += n
		}
		t.Logf("  %-28s %-46s %-16s %6d  %.4f/gen", route, cause, outcome, n, float64(n)/float64(gens))
	}
	require.NoError(t, rows.Err())
	var posts, keys int64
	require.NoError(t, db.QueryRowContext(t.Context(), `SELECT count(*), count(DISTINCT key) FROM proof_requests
		WHERE route = 'POST /v3/generations'`).Scan(&posts, &keys))
	t.Logf("  creates: %d attempts for %d keys (%.3f per key)", posts, keys, float64(posts)/float64(max(keys, 1)))
	api := after.Requests - before.Requests - storage
	faulted := (after.Replaced - before.Replaced) + (after.DroppedBefore - before.DroppedBefore) + (after.DroppedAfter - before.DroppedAfter)
	t.Logf("  server: %d API attempts (%d storage left out); injected: %d statuses, %d dropped before the handler, %d dropped after it (processed, answer lost)",
		api, storage, after.Replaced-before.Replaced, after.DroppedBefore-before.DroppedBefore, after.DroppedAfter-before.DroppedAfter)
	return float64(api) / float64(gens), float64(api-faulted) / float64(gens)
}
