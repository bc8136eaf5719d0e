package mediagentemporal_test

import (
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	mt "github.com/mediagen/mediagen-go/temporal"
)

func activityEnv(acts *mt.Activities) *testsuite.TestActivityEnvironment {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	env.RegisterActivity(acts)
	return env
}

func TestGenerateSubmitsWaitsAndSaves(t *testing.T) {
	f := newFixture(t)
	before := f.srv.Balance()
	acts := newActivities(t, f.client())
	req := image("a lighthouse at dusk")
	req.SaveTo = t.TempDir()

	v, err := activityEnv(acts).ExecuteActivity(acts.Generate, req)
	require.NoError(t, err)
	var res mt.Result
	require.NoError(t, v.Get(&res))

	assert.Equal(t, mediagen.GenerationStatusDone, res.Generation.Status)
	assert.Equal(t, "temporal:default-test-workflow-id/0", res.Key, "the key is the workflow id and the activity id")
	require.NotNil(t, res.Saved)
	info, err := os.Stat(res.Saved.Path)
	require.NoError(t, err)
	assert.Positive(t, info.Size())
	assert.EqualValues(t, 1, f.posts.Load())
	assert.InDelta(t, before-res.Generation.BalanceUsed, f.srv.Balance(), 1e-9)
}

// A retried attempt that has no heartbeat (the first died before
// recording one) has the same key (workflowEnv checks every attempt derives
// it) and gets the same generation from the journal, without a second POST.
func TestRetriedAttemptReusesTheKey(t *testing.T) {
	f := newFixture(t)
	acts := newActivities(t, f.client())
	env := activityEnv(acts)
	var ids []string
	req := image("a red fox in snow")
	for range 2 {
		v, err := env.ExecuteActivity(acts.Generate, req)
		require.NoError(t, err)
		var res mt.Result
		require.NoError(t, v.Get(&res))
		ids = append(ids, res.Generation.ID)
		req.Key = res.Key // this environment numbers activities: pin the first one's key
	}
	assert.Equal(t, ids[0], ids[1])
	assert.EqualValues(t, 1, f.posts.Load())
	assert.Len(t, f.generations(t), 1)
}

// The first attempt submits, heartbeats the id and loses its wait; the
// second runs on another worker whose journal knows nothing (a memory
// journal that died with the first) and, given the heartbeat details,
// resumes the wait with no POST at all.
func TestHeartbeatResumesWithoutSecondCreate(t *testing.T) {
	f := newFixture(t)
	first := newActivities(t, f.client(client.WithMaxRetries(0), client.WithMiddleware(failFirstRead())))
	env := activityEnv(first)
	var beat string
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		_ = d.Get(&beat)
	})
	_, err := env.ExecuteActivity(first.Generate, image("a paper boat"))
	require.ErrorContains(t, err, "worker lost")
	require.NotEmpty(t, beat, "the first attempt heartbeated its generation id")
	require.EqualValues(t, 1, f.posts.Load())

	second := newActivities(t, f.client()) // a fresh worker, a fresh journal
	env2 := activityEnv(second)
	env2.SetHeartbeatDetails(beat)
	v, err := env2.ExecuteActivity(second.Generate, image("a paper boat"))
	require.NoError(t, err)
	var res mt.Result
	require.NoError(t, v.Get(&res))
	assert.Equal(t, beat, res.Generation.ID)
	assert.Equal(t, mediagen.GenerationStatusDone, res.Generation.Status)
	assert.EqualValues(t, 1, f.posts.Load(), "no second create")
	assert.Len(t, f.generations(t), 1)
}

// The same in a workflow: Temporal retries the failed attempt and hands it
// the heartbeat details itself.
func TestWorkflowRetryResumesFromHeartbeat(t *testing.T) {
	f := newFixture(t)
	acts := newActivities(t, f.client(client.WithMaxRetries(0), client.WithMiddleware(failFirstRead())))
	env, attempts := workflowEnv(t, acts)
	env.ExecuteWorkflow(generateAll, []mt.Request{image("one"), image("two"), image("three")})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res []mt.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	for _, r := range res {
		assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
	}
	assert.EqualValues(t, 6, attempts.Load(), "each activity failed once and was retried")
	assert.EqualValues(t, 3, f.posts.Load(), "one create per activity")
	assert.Len(t, f.generations(t), 3)
}

// Faults on every route of the reference server (answers replaced,
// connections dropped before and after the server acted) make activities
// fail and Temporal retry them; every key is still charged exactly once.
func TestWorkflowRetriesAfterFaultsChargeOncePerKey(t *testing.T) {
	f := newFixture(t, clienttest.WithFaults(clienttest.Faults{
		Seed: 7, HTTPStatus: 0.2, DropBefore: 0.1, DropAfter: 0.15,
	}))
	before := f.srv.Balance()
	// A call that fails ambiguously leaves its key held until the hold
	// lapses (on the wall clock); the retry waits for it, then searches.
	acts := newActivities(t, f.client(client.WithMaxRetries(1), client.WithJournalHold(time.Second)))
	env, attempts := workflowEnv(t, acts)
	var reqs []mt.Request
	for _, p := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		reqs = append(reqs, image("prompt "+p))
	}
	env.ExecuteWorkflow(generateAll, reqs)
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res []mt.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	require.NoError(t, f.srv.SetFaults(clienttest.Faults{}))

	keys := map[string]string{}
	for _, r := range res {
		assert.Equal(t, mediagen.GenerationStatusDone, r.Generation.Status)
		keys[r.Key] = r.Generation.ID
	}
	assert.Len(t, keys, len(reqs), "a key per activity")
	gens := f.generations(t)
	assert.Len(t, gens, len(reqs), "one generation per key on the server")
	var charged float64
	for _, g := range gens {
		charged += g.BalanceUsed
	}
	assert.InDelta(t, before-charged, f.srv.Balance(), 1e-9)
	assert.Greater(t, attempts.Load(), int64(len(reqs)), "faults made Temporal retry")
	t.Logf("%d attempts for %d activities, %d POSTs, faults %+v", attempts.Load(), len(reqs), f.posts.Load(), f.srv.FaultCounts())
}

// A render that fails is refunded and final: a non-retryable application
// error with the generation id and the reason, after one attempt.
func TestFailedRenderIsNonRetryable(t *testing.T) {
	f := newFixture(t, clienttest.WithOutcome(func(mediagen.Feature) clienttest.Outcome { return clienttest.OutcomeError }))
	before := f.srv.Balance()
	acts := newActivities(t, f.client())
	env, attempts := workflowEnv(t, acts)
	env.ExecuteWorkflow(generateAll, []mt.Request{image("doomed")})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	var appErr *temporal.ApplicationError
	require.True(t, errors.As(err, &appErr), "%v", err)
	assert.True(t, appErr.NonRetryable())
	assert.Equal(t, mt.ErrorFailed, appErr.Type())
	var fail mt.Failure
	require.NoError(t, appErr.Details(&fail))
	gens := f.generations(t)
	require.Len(t, gens, 1)
	assert.Equal(t, gens[0].ID, fail.GenerationID)
	assert.Equal(t, "error", fail.Status)
	assert.NotEmpty(t, fail.Reason)
	assert.EqualValues(t, 1, attempts.Load(), "not retried")
	assert.EqualValues(t, 1, f.posts.Load())
	assert.InDelta(t, before, f.srv.Balance(), 1e-9, "refunded")
}

func TestInvalidRequestIsNonRetryable(t *testing.T) {
	f := newFixture(t)
	acts := newActivities(t, f.client())
	for _, req := range []mt.Request{{}, {Feature: "image/generation", Args: map[string]any{}}} {
		_, err := activityEnv(acts).ExecuteActivity(acts.Generate, req)
		var appErr *temporal.ApplicationError
		require.True(t, errors.As(err, &appErr), "%v", err)
		assert.True(t, appErr.NonRetryable())
		assert.Equal(t, mt.ErrorRefused, appErr.Type())
	}
	assert.Zero(t, f.posts.Load())
}

func TestNewRefusesBadOptions(t *testing.T) {
	f := newFixture(t)
	_, err := mt.New(nil)
	assert.Error(t, err)
	_, err = mt.New(f.client(), nil, mt.WithHub(nil), mt.WithAsyncCompletion(nil))
	assert.Error(t, err)
	acts := newActivities(t, f.client())
	_, err = acts.Completer(nil)
	assert.Error(t, err, "no token store")
}

// An activity keeps heartbeating while it saves the output: a download
// longer than the HeartbeatTimeout timed the attempt out, and every retry
// the same way, as the heartbeats stopped when the wait ended.
func TestSaveLongerThanHeartbeatTimeout(t *testing.T) {
	f := newFixture(t)
	slow := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if req.Method == http.MethodGet && !strings.HasPrefix(req.URL.Path, "/v3/") {
			time.Sleep(1500 * time.Millisecond) // the output's download
		}
		return next(req)
	}
	acts := newActivities(t, f.client(client.WithMiddleware(slow)))
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute)
	env.RegisterActivity(acts)
	req := image("a slow download")
	req.SaveTo = t.TempDir()
	env.ExecuteWorkflow(func(ctx workflow.Context) (*mt.Result, error) {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{
			StartToCloseTimeout: time.Minute,
			HeartbeatTimeout:    600 * time.Millisecond,
			RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
		})
		var res mt.Result
		err := workflow.ExecuteActivity(ctx, acts.Generate, req).Get(ctx, &res)
		return &res, err
	})
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var res mt.Result
	require.NoError(t, env.GetWorkflowResult(&res))
	require.NotNil(t, res.Saved)
	assert.FileExists(t, res.Saved.Path)
}
