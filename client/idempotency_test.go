package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sync/errgroup"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
)

func keyedClient(t testing.TB, srv *clienttest.Server, j journal.Journal) *client.Client {
	t.Helper()
	return srv.Client(client.WithJournal(j), client.WithJournalHold(2*time.Second))
}

func countGenerations(t *testing.T, c *client.Client) int {
	t.Helper()
	n := 0
	for _, err := range c.Generations(context.Background(), client.ListParams{}) {
		require.NoError(t, err)
		n++
	}
	return n
}

func TestIdempotencyKeyChargesOnce(t *testing.T) {
	srv := clienttest.NewServer(t)
	j := journal.NewMemory()
	c := keyedClient(t, srv, j)
	ctx := t.Context()
	args := client.ImageGenerationArgs{Prompt: "a heron"}
	// A keyed call records its estimate from prices the client holds.
	_, err := c.Pricing(ctx)
	require.NoError(t, err)

	g1, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("order-1"))
	require.NoError(t, err)
	after := srv.Balance()
	g2, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("order-1"))
	require.NoError(t, err)
	assert.Equal(t, g1.ID, g2.ID)
	assert.Equal(t, after, srv.Balance(), "the second call charged nothing")
	assert.Equal(t, 1, countGenerations(t, c))

	rec, err := j.Get(ctx, "order-1")
	require.NoError(t, err)
	assert.Equal(t, g1.ID, rec.ID)
	assert.Equal(t, "generation", rec.Op)
	assert.Equal(t, "image/generation", rec.Feature)
	assert.InDelta(t, 0.04, rec.Estimate, 1e-9, "the estimate is recorded")
	assert.NotEmpty(t, rec.Fingerprint)

	// The same key with other arguments sends nothing.
	_, err = c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a wren"}, client.WithIdempotencyKey("order-1"))
	require.ErrorIs(t, err, client.ErrIdempotencyMismatch)
	assert.Equal(t, after, srv.Balance())

	// Another key charges again.
	g3, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("order-2"))
	require.NoError(t, err)
	assert.NotEqual(t, g1.ID, g3.ID)
}

func TestIdempotencyKeyBadInput(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client()
	ctx := t.Context()
	for _, key := range []string{"", strings.Repeat("k", client.MaxIdempotencyKey+1)} {
		_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey(key))
		require.ErrorIs(t, err, client.ErrInvalidArgument)
	}
	_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey(strings.Repeat("k", client.MaxIdempotencyKey)))
	require.NoError(t, err)
	assert.Equal(t, 1, countGenerations(t, c), "only the valid key sent anything")
	_, err = client.New("k", client.WithBaseURL(srv.URL()), client.WithIdempotencyKey("x"))
	assert.ErrorContains(t, err, "one call")
	_, err = client.New("k", client.WithBaseURL(srv.URL()), client.WithJournal(nil))
	assert.ErrorContains(t, err, "WithJournal")
}

// A call the service refuses charged nothing and frees its key.
func TestRefusedCallFreesTheKey(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithBalance(0.01))
	c := keyedClient(t, srv, journal.NewMemory())
	ctx := t.Context()
	_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey("k"))
	require.ErrorIs(t, err, client.ErrInsufficientBalance)
	srv.SetBalance(10)
	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey("k"))
	require.NoError(t, err)
	assert.NotEmpty(t, g.ID)
}

// Clients sharing a journal, racing on one key: one generation, one
// charge, every caller handed its id.
func TestConcurrentCallersShareOneGeneration(t *testing.T) {
	srv := clienttest.NewServer(t)
	j := journal.NewMemory()
	before := srv.Balance()
	var wg sync.WaitGroup
	ids := make([]string, 16)
	for i := range ids {
		c := keyedClient(t, srv, j)
		wg.Go(func() {
			g, err := c.CreateGeneration(context.Background(), client.ImageGenerationArgs{Prompt: "shared"}, client.WithIdempotencyKey("order-9"))
			if assert.NoError(t, err) {
				ids[i] = g.ID
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		assert.Equal(t, ids[0], id)
	}
	assert.InDelta(t, before-0.04, srv.Balance(), 1e-9, "charged once")
}

// deadHolderSent sends args as a holder of key that then died: the
// generation, and the key's record in j, held until a moment ago.
func deadHolderSent(t *testing.T, srv *clienttest.Server, j journal.Journal, key string, args client.ImageGenerationArgs) *mediagen.Generation {
	t.Helper()
	start := srv.Now()
	sent, err := srv.Client().CreateGeneration(t.Context(), args)
	require.NoError(t, err)
	_, _, err = j.Claim(t.Context(), journal.Record{Key: key, Op: "generation", Feature: "image/generation",
		Fingerprint: recordedFingerprint(t, srv, args), Holder: "dead", HeldUntil: time.Now().Add(-time.Millisecond),
		Started: start, Created: start})
	require.NoError(t, err)
	return sent
}

// A holder that died after sending: the next caller searches, finds the
// generation and charges nothing; one that died before sending is
// replaced by one send.
func TestDeadHolderIsReconciled(t *testing.T) {
	srv := clienttest.NewServer(t)
	ctx := t.Context()
	j := journal.NewMemory()
	c := keyedClient(t, srv, j)
	args := client.ImageGenerationArgs{Prompt: "left behind"}

	sent := deadHolderSent(t, srv, j, "k-dead", args)
	before := srv.Balance()
	g, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("k-dead"))
	require.NoError(t, err)
	assert.Equal(t, sent.ID, g.ID, "found, not sent again")
	assert.Equal(t, before, srv.Balance())

	// Died before sending: nothing to find, so one send.
	_, _, err = j.Claim(ctx, journal.Record{Key: "k-early", Op: "generation", Feature: "image/generation",
		Fingerprint: recordedFingerprint(t, srv, client.ImageGenerationArgs{Prompt: "never sent"}),
		Holder:      "dead", HeldUntil: time.Now().Add(-time.Millisecond), Started: srv.Now(), Created: srv.Now()})
	require.NoError(t, err)
	g, err = c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "never sent"}, client.WithIdempotencyKey("k-early"))
	require.NoError(t, err)
	assert.InDelta(t, before-0.04, srv.Balance(), 1e-9)
	rec, err := j.Get(ctx, "k-early")
	require.NoError(t, err)
	assert.Equal(t, g.ID, rec.ID)
}

// recordedFingerprint is the fingerprint a keyed call records for args,
// read from a journal it used.
func recordedFingerprint(t testing.TB, srv *clienttest.Server, args client.Args) string {
	t.Helper()
	j := journal.NewMemory()
	_, err := keyedClient(t, srv, j).CreateGeneration(t.Context(), args, client.WithIdempotencyKey("probe"))
	require.NoError(t, err)
	rec, err := j.Get(t.Context(), "probe")
	require.NoError(t, err)
	return rec.Fingerprint
}

// A caller that finds the key held by a live caller waits for its outcome
// instead of sending.
func TestLiveHolderIsWaitedFor(t *testing.T) {
	srv := clienttest.NewServer(t)
	ctx := t.Context()
	j := journal.NewMemory()
	args := client.ImageGenerationArgs{Prompt: "in flight"}
	fp := recordedFingerprint(t, srv, args)
	other, err := srv.Client().CreateGeneration(ctx, args)
	require.NoError(t, err)
	_, _, err = j.Claim(ctx, journal.Record{Key: "k", Op: "generation", Feature: "image/generation", Fingerprint: fp,
		Holder: "alive", HeldUntil: time.Now().Add(time.Hour), Started: srv.Now(), Created: srv.Now()})
	require.NoError(t, err)
	before := srv.Balance()
	done := make(chan *mediagen.Generation)
	go func() {
		g, err := keyedClient(t, srv, j).CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
		assert.NoError(t, err)
		done <- g
	}()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, j.Settle(ctx, "k", "alive", other.ID))
	select {
	case g := <-done:
		assert.Equal(t, other.ID, g.ID)
	case <-time.After(10 * time.Second):
		t.Fatal("the waiter did not see the holder's outcome")
	}
	assert.Equal(t, before, srv.Balance(), "the waiter sent nothing")
}

// failingJournal cannot be reached.
type failingJournal struct{ journal.Journal }

func (failingJournal) Claim(context.Context, journal.Record) (journal.Record, bool, error) {
	return journal.Record{}, false, errors.New("connection refused")
}

func TestUnreachableJournalSendsNothing(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := srv.Client(client.WithJournal(failingJournal{}))
	_, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey("k"))
	require.ErrorContains(t, err, "connection refused")
	assert.Equal(t, clienttest.Balance, srv.Balance())
	assert.Equal(t, 0, countGenerations(t, c))
}

func TestExpiredGenerationOfAKey(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := keyedClient(t, srv, journal.NewMemory())
	ctx := t.Context()
	_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey("k"))
	require.NoError(t, err)
	srv.Advance(25 * time.Hour)
	_, err = c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey("k"))
	require.ErrorIs(t, err, client.ErrNotFound)
	assert.ErrorContains(t, err, "gone")
}

func TestCloneVoiceWithAKey(t *testing.T) {
	srv := clienttest.NewServer(t)
	c := keyedClient(t, srv, journal.NewMemory())
	ctx := t.Context()
	f := uploadWAV(t, ctx, c, 30*time.Second)
	p := client.CloneVoiceParams{Name: "Narrator", Audio: f}
	v1, err := c.CloneVoice(ctx, p, client.WithIdempotencyKey("voice-for-user-77"))
	require.NoError(t, err)
	after := srv.Balance()
	v2, err := c.CloneVoice(ctx, p, client.WithIdempotencyKey("voice-for-user-77"))
	require.NoError(t, err)
	assert.Equal(t, v1.ID, v2.ID)
	assert.Equal(t, after, srv.Balance())
	_, err = c.CloneVoice(ctx, client.CloneVoiceParams{Name: "Other", Audio: f}, client.WithIdempotencyKey("voice-for-user-77"))
	require.ErrorIs(t, err, client.ErrIdempotencyMismatch)
}

// A restarted program finds what it has not finished and saved.
func TestUnfinished(t *testing.T) {
	srv := clienttest.NewServer(t)
	j := journal.NewMemory()
	c := keyedClient(t, srv, j)
	ctx := t.Context()
	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "resume me"}, client.WithIdempotencyKey("job-1"))
	require.NoError(t, err)

	restarted := keyedClient(t, srv, j)
	var got []client.Resumable
	for r, err := range restarted.Unfinished(ctx) {
		require.NoError(t, err)
		got = append(got, r)
	}
	require.Len(t, got, 1)
	assert.Equal(t, "job-1", got[0].Key)
	assert.Equal(t, g.ID, got[0].Generation.ID)

	srv.Advance(time.Minute)
	done, err := restarted.GetGeneration(ctx, g.ID)
	require.NoError(t, err)
	require.Equal(t, mediagen.GenerationStatusDone, done.Status)
	_, err = restarted.SaveOutput(ctx, done, t.TempDir(), client.WithIdempotencyKey("job-1"))
	require.NoError(t, err)
	for r, err := range restarted.Unfinished(ctx) {
		t.Errorf("still unfinished: %+v %v", r, err)
	}
}

// settleFails loses every Settle: the database went away after the send.
type settleFails struct{ journal.Journal }

func (settleFails) Settle(context.Context, string, string, string) error {
	return errors.New("connection reset")
}

// A journal that fails after the send leaves the generation to be found by
// the next call with the key, once the hold lapses: no second charge.
func TestLostRecordIsFoundByTheNextCall(t *testing.T) {
	srv := clienttest.NewServer(t)
	ctx := t.Context()
	mem := journal.NewMemory()
	args := client.ImageGenerationArgs{Prompt: "recorded nowhere"}
	g1, err := srv.Client(client.WithJournal(settleFails{mem}), client.WithJournalHold(time.Second)).
		CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	require.NoError(t, err, "the generation was made; the caller gets it")
	after := srv.Balance()
	g2, err := srv.Client(client.WithJournal(mem), client.WithJournalHold(time.Second)).
		CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	require.NoError(t, err)
	assert.Equal(t, g1.ID, g2.ID, "found by the search, not sent again")
	assert.Equal(t, after, srv.Balance())
	rec, err := mem.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, g1.ID, rec.ID)
}

// Records older than the retention are deleted by the keyed calls, at most
// once an hour per client; younger ones stay.
func TestOldRecordsAreCleanedUp(t *testing.T) {
	srv := clienttest.NewServer(t)
	ctx := t.Context()
	j := journal.NewMemory()
	old := time.Now().Add(-journal.Retention - time.Hour)
	young := time.Now().Add(-journal.Retention + time.Hour)
	for key, created := range map[string]time.Time{"old": old, "young": young} {
		_, _, err := j.Claim(ctx, journal.Record{Key: key, Op: "generation", ID: "gen_x", Created: created})
		require.NoError(t, err)
	}
	_, err := keyedClient(t, srv, j).CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey("new"))
	require.NoError(t, err)
	_, err = j.Get(ctx, "old")
	assert.ErrorIs(t, err, journal.ErrNotFound)
	_, err = j.Get(ctx, "young")
	assert.NoError(t, err)
}

// A caller that takes over a lapsed key keeps the key's first start, so
// the search of any later caller still covers the first holder's send: a
// later start would let a third caller miss it and charge twice.
func TestTakeoverKeepsTheFirstStart(t *testing.T) {
	srv := clienttest.NewServer(t)
	ctx := t.Context()
	j := journal.NewMemory()
	args := client.ImageGenerationArgs{Prompt: "taken over twice"}
	first := srv.Now().Add(-time.Minute)
	_, _, err := j.Claim(ctx, journal.Record{Key: "k", Op: "generation", Feature: "image/generation",
		Fingerprint: recordedFingerprint(t, srv, args), Holder: "dead", HeldUntil: time.Now().Add(-time.Millisecond),
		Started: first, Created: time.Now()})
	require.NoError(t, err)
	_, err = keyedClient(t, srv, j).CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	require.NoError(t, err)
	rec, err := j.Get(ctx, "k")
	require.NoError(t, err)
	assert.True(t, rec.Started.Equal(first), "started %s, want the first %s", rec.Started, first)
}

// A create the service rate-limited past the retries charged nothing: its
// key is freed at once, not held until the hold lapses.
func TestRateLimitedCallFreesTheKey(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithFaults(clienttest.Faults{Seed: 1, HTTPStatus: 1, Statuses: []int{429},
		Paths: []string{"/v3/generations"}, Methods: []string{"POST"}}))
	j := journal.NewMemory()
	c := srv.Client(client.WithJournal(j), client.WithMaxRetries(0))
	_, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey("k"))
	require.ErrorIs(t, err, client.ErrRateLimited)
	_, err = j.Get(t.Context(), "k")
	assert.ErrorIs(t, err, journal.ErrNotFound, "the key is free for the next call")
}

// After a crash under load many keys are taken over at once, and each
// dead holder's send lies below thousands of newer rows of its feature:
// every search reads as deep as its send, and the searches share their
// listings instead of each reading the same pages.
func TestManyTakeoversBelowThousandsOfRows(t *testing.T) {
	const (
		sent, unsent = 30, 10
		newer        = 2_500 // rows requested after the dead holders began
	)
	srv := clienttest.NewServer(t, clienttest.WithBalance(1_000))
	ctx := t.Context()
	scene := newCrashScene(t, srv, sent, unsent, newer)
	var lists, posts atomic.Int32
	count := func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		switch {
		case req.Method == http.MethodGet && req.URL.Path == "/v3/generations":
			lists.Add(1)
		case req.Method == http.MethodPost:
			posts.Add(1)
		}
		return next(req)
	}
	j := scene.journal(t)
	c := srv.Client(client.WithJournal(j), client.WithJournalHold(2*time.Second), client.WithMiddleware(count))
	before := srv.Balance()
	got := make([]*mediagen.Generation, sent+unsent)
	var g errgroup.Group // all at once, as a restarted batch takes them over
	for i := range got {
		g.Go(func() (err error) {
			got[i], err = c.CreateGeneration(ctx, scene.args(i), client.WithIdempotencyKey(scene.key(i)))
			return err
		})
	}
	require.NoError(t, g.Wait())
	for i := range sent {
		assert.Equal(t, scene.ids[i], got[i].ID, "key %s: the dead holder's send is found, not sent again", scene.key(i))
	}
	assert.EqualValues(t, unsent, posts.Load(), "only the keys whose holder died before sending are sent")
	assert.InDelta(t, before-unsent*0.04, srv.Balance(), 1e-9)
	pages := (sent + newer + 99) / 100
	// Each search alone reads pages pages. Shared, a listing serves the
	// first search and the next one every search that came meanwhile: 2
	// listings here; 4 leave room for a slow machine, 10 times under 40.
	assert.LessOrEqual(t, int(lists.Load()), 4*pages, "listings shared: %d list requests for %d searches of %d pages", lists.Load(), len(got), pages)
}

// crashScene is a worker that died under load: it held sent+unsent keys,
// had sent the creates of the first sent (ids), and newer generations of
// the feature were requested after it began.
type crashScene struct {
	fps   []string // each key's fingerprint
	ids   []string // the dead holder's sends
	start time.Time
}

func newCrashScene(t testing.TB, srv *clienttest.Server, sent, unsent, newer int) *crashScene {
	t.Helper()
	ctx := context.Background()
	sc := &crashScene{fps: make([]string, sent+unsent), ids: make([]string, sent)}
	// Fingerprints are read on a server of their own, whose probe
	// generations the searches must not find.
	probe := clienttest.NewServer(t)
	for i := range sc.fps {
		sc.fps[i] = recordedFingerprint(t, probe, sc.args(i))
	}
	sc.start = srv.Now()
	for i := range sent {
		g, err := srv.Client().CreateGeneration(ctx, sc.args(i))
		require.NoError(t, err)
		sc.ids[i] = g.ID
	}
	var g errgroup.Group
	g.SetLimit(16)
	for i := range newer {
		g.Go(func() error {
			_, err := srv.Client().CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: fmt.Sprintf("later %d", i)})
			return err
		})
	}
	require.NoError(t, g.Wait())
	return sc
}

func (sc *crashScene) args(i int) client.ImageGenerationArgs {
	return client.ImageGenerationArgs{Prompt: fmt.Sprintf("held by a dead worker %d", i)}
}

func (sc *crashScene) key(i int) string { return fmt.Sprintf("k%d", i) }

// journal returns a journal in which the dead worker holds every key, its
// holds lapsed a moment ago.
func (sc *crashScene) journal(t testing.TB) journal.Journal {
	t.Helper()
	j := journal.NewMemory()
	for i, fp := range sc.fps {
		_, _, err := j.Claim(context.Background(), journal.Record{Key: sc.key(i), Op: "generation", Feature: "image/generation",
			Fingerprint: fp, Holder: "dead", HeldUntil: time.Now().Add(-time.Millisecond), Started: sc.start, Created: sc.start})
		require.NoError(t, err)
	}
	return j
}

// TestKeyedCreatesSendNoPricingRequest: the estimate a keyed create records
// comes from prices the client already holds; none is read on the charging
// path, so a failing price list neither slows nor serializes creates.
func TestKeyedCreatesSendNoPricingRequest(t *testing.T) {
	srv := clienttest.NewServer(t)
	var pricing atomic.Int32
	failPricing := client.WithMiddleware(func(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, "/v3/pricing") {
			pricing.Add(1)
			return &http.Response{StatusCode: http.StatusServiceUnavailable, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
		}
		return next(req)
	})
	j := journal.NewMemory()
	c := srv.Client(client.WithJournal(j), failPricing)
	ctx := t.Context()

	var g errgroup.Group
	for i := range 8 {
		g.Go(func() error {
			_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: fmt.Sprintf("heron %d", i)},
				client.WithIdempotencyKey(fmt.Sprintf("k%d", i)))
			return err
		})
	}
	require.NoError(t, g.Wait())
	assert.Zero(t, pricing.Load(), "no pricing request on the charging path")
	rec, err := j.Get(ctx, "k0")
	require.NoError(t, err)
	assert.NotEmpty(t, rec.ID)
	assert.Zero(t, rec.Estimate, "no price list held: no estimate")

	_, err = c.Pricing(ctx)
	require.Error(t, err, "the price list itself fails, as it should")
	assert.Positive(t, pricing.Load())
}

// takenJournal is a journal in which every renewal finds the key taken by
// another caller, as after a pause longer than the hold.
type takenJournal struct{ *journal.Memory }

func (takenJournal) Renew(context.Context, string, string, time.Time) (bool, error) {
	return false, nil
}

// A keyed call whose hold was taken over while it retried does not send
// again: the caller that took the key searches and sends, and two sends
// could charge twice.
func TestKeyedCallDoesNotResendAfterItsHoldWasTaken(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithWallClock())
	before := srv.Balance()
	next := loopback(t)
	var posts atomic.Int32
	tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPost && r.URL.Path == "/v3/generations" && posts.Add(1) == 1 {
			drain(r)
			return synthetic(r, http.StatusBadGateway, "", nil), nil // never reached the service: nothing created
		}
		return next.RoundTrip(r)
	})
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithJournal(takenJournal{journal.NewMemory()}), client.WithJournalHold(time.Second),
		client.WithRetryWait(2*time.Second, 2*time.Second)) // past the first renewal, a third of the hold
	_, err := c.CreateGeneration(t.Context(), asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "a held kite"}),
		client.WithIdempotencyKey("order-held"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not sent again")
	assert.EqualValues(t, 1, posts.Load(), "no second create")
	page, err := c.ListGenerations(t.Context(), client.ListParams{})
	require.NoError(t, err)
	assert.Empty(t, page.Generations)
	assert.Equal(t, before, srv.Balance())
}

// A keyed call whose create never reached the service (nothing listens)
// charged nothing: it frees its key, so the next call with the key sends
// at once instead of waiting out the hold and searching.
func TestKeyedCallNeverSentFreesItsKey(t *testing.T) {
	j := journal.NewMemory()
	c, err := client.New("key", client.WithBaseURL("http://127.0.0.1:1"), client.WithJournal(j),
		client.WithMaxRetries(1), client.WithRetryWait(0, time.Millisecond))
	require.NoError(t, err)
	_, err = c.CreateGeneration(t.Context(), asArgs(t, mediagen.FeatureImageGeneration, client.ImageGenerationArgs{Prompt: "an unsent kite"}),
		client.WithIdempotencyKey("order-unsent"))
	require.Error(t, err)
	var uncertain *client.UncertainError
	require.False(t, errors.As(err, &uncertain), "surely not sent: %v", err)
	_, err = j.Get(t.Context(), "order-unsent")
	assert.ErrorIs(t, err, journal.ErrNotFound, "the key is free again")
}

// A create refused with 401 (a wrong or revoked key) charged nothing: its
// idempotency key is freed at once, as after any other refusal.
func TestUnauthorizedCallFreesTheKey(t *testing.T) {
	srv := clienttest.NewServer(t)
	j := journal.NewMemory()
	c, err := srv.ClientFor("mg_not_a_key", client.WithJournal(j))
	require.NoError(t, err)
	_, err = c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "p"}, client.WithIdempotencyKey("k"))
	require.ErrorIs(t, err, client.ErrUnauthorized)
	_, err = c.CloneVoice(t.Context(), client.CloneVoiceParams{Name: "n", Audio: "file_x"}, client.WithIdempotencyKey("v"))
	require.ErrorIs(t, err, client.ErrUnauthorized)
	for _, key := range []string{"k", "v"} {
		_, err = j.Get(t.Context(), key)
		assert.ErrorIs(t, err, journal.ErrNotFound, "the key %s is free for the next call", key)
	}
}

// settleFailsOnce loses the first Settle only, as a database that blinked.
type settleFailsOnce struct {
	*journal.Memory
	failed atomic.Bool
}

func (j *settleFailsOnce) Settle(ctx context.Context, key, holder, id string) error {
	if j.failed.CompareAndSwap(false, true) {
		return errors.New("connection reset")
	}
	return j.Memory.Settle(ctx, key, holder, id)
}

// The next call with a key whose id could not be recorded finds the
// generation also from the same client, where the row is already handed
// out (its search skipped it and sent again: charged twice).
func TestLostRecordIsFoundBySameClient(t *testing.T) {
	srv := clienttest.NewServer(t)
	ctx := t.Context()
	j := &settleFailsOnce{Memory: journal.NewMemory()}
	c := srv.Client(client.WithJournal(j), client.WithJournalHold(time.Second))
	args := client.ImageGenerationArgs{Prompt: "recorded later"}
	g1, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	require.NoError(t, err)
	after := srv.Balance()
	g2, err := c.CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	require.NoError(t, err)
	assert.Equal(t, g1.ID, g2.ID, "found, not sent again")
	assert.Equal(t, after, srv.Balance())
	rec, err := j.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, g1.ID, rec.ID)
}

// A call that took over a dead holder's key and lost it while searching
// for what that holder sent (its renewals find the key taken) sends
// nothing: the caller that took the key searches and sends, and two
// sends could charge twice.
func TestTakeoverDoesNotSendAfterItsHoldWasTaken(t *testing.T) {
	srv := clienttest.NewServer(t)
	ctx := t.Context()
	j := takenJournal{journal.NewMemory()}
	args := client.ImageGenerationArgs{Prompt: "never sent by the dead"}
	fp := recordedFingerprint(t, srv, args)
	srv.Advance(time.Minute) // the probe's generation is out of the search's sight
	_, _, err := j.Claim(ctx, journal.Record{Key: "k", Op: "generation", Feature: "image/generation",
		Fingerprint: fp, Holder: "dead", HeldUntil: time.Now().Add(-time.Millisecond),
		Started: srv.Now(), Created: srv.Now()})
	require.NoError(t, err)
	before := srv.Balance()
	next := loopback(t)
	var posts atomic.Int32
	tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		switch {
		case r.Method == http.MethodPost:
			posts.Add(1)
		case r.URL.Path == "/v3/generations":
			time.Sleep(600 * time.Millisecond) // a slow search: past the first renewal, a third of the hold
		}
		return next.RoundTrip(r)
	})
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: tr}), client.WithJournal(j), client.WithJournalHold(time.Second))
	_, err = c.CreateGeneration(ctx, args, client.WithIdempotencyKey("k"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not sent")
	assert.Zero(t, posts.Load(), "no create")
	assert.Equal(t, before, srv.Balance())
}

// slowClaimJournal answers Claim late and never renews: a journal that
// became slow, then unreachable.
type slowClaimJournal struct {
	*journal.Memory
	delay time.Duration
}

func (j slowClaimJournal) Claim(ctx context.Context, r journal.Record) (journal.Record, bool, error) {
	time.Sleep(j.delay)
	return j.Memory.Claim(ctx, r)
}

func (slowClaimJournal) Renew(context.Context, string, string, time.Time) (bool, error) {
	return false, errors.New("connection refused")
}

// A keyed call's hold is the one the journal recorded, from before a slow
// Claim: counted from after it, the call sent again after the journal's
// hold had lapsed, when another caller may have taken the key and sent.
func TestHoldCountsFromTheClaim(t *testing.T) {
	srv := clienttest.NewServer(t)
	before := srv.Balance()
	next := loopback(t)
	var posts atomic.Int32
	tr := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		switch {
		case r.Method == http.MethodPost && posts.Add(1) == 1:
			drain(r)
			return synthetic(r, http.StatusBadGateway, "", nil), nil // never reached the service
		case r.Method == http.MethodGet && r.URL.Path == "/v3/generations":
			time.Sleep(400 * time.Millisecond) // the search ends past the recorded hold
		}
		return next.RoundTrip(r)
	})
	c := srv.Client(client.WithHTTPClient(&http.Client{Transport: tr}),
		client.WithJournal(slowClaimJournal{journal.NewMemory(), 700 * time.Millisecond}), client.WithJournalHold(time.Second))
	_, err := c.CreateGeneration(t.Context(), client.ImageGenerationArgs{Prompt: "a slow journal"}, client.WithIdempotencyKey("k"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not sent again")
	assert.EqualValues(t, 1, posts.Load(), "no second create")
	assert.Equal(t, before, srv.Balance())
}
