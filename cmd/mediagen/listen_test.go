package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
	"github.com/mediagen/mediagen-go/upload"
	"github.com/mediagen/mediagen-go/webhook"
)

// interval is the listing interval of the tests' listen.
const interval = 500 * time.Millisecond

// counted is a reference server on a fake clock (renders at their real
// length, so the clock decides when each ends).
type counted struct{ *clienttest.Server }

func newCounted(t *testing.T) *counted {
	t.Helper()
	return &counted{clienttest.NewServer(t, clienttest.WithRenderScale(1), clienttest.WithBalance(1000))}
}

// front is a listener in front of the server for one listen, counting the
// requests it makes.
type front struct {
	url, key, secret              string
	lists, pages, gets, voiceGets atomic.Int64
}

func (s *counted) front(t *testing.T) *front {
	t.Helper()
	f := &front{key: s.APIKey(), secret: s.WebhookSecret()}
	h := s.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method != http.MethodGet:
		case r.URL.Path == "/v3/generations":
			f.lists.Add(1)
			if r.URL.Query().Get("cursor") != "" {
				f.pages.Add(1)
			}
		case strings.HasPrefix(r.URL.Path, "/v3/generations/"):
			f.gets.Add(1)
		case strings.HasPrefix(r.URL.Path, "/v3/voices/"):
			f.voiceGets.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// env is the environment of a listen talking through f, webhook secret
// included.
func (f *front) env() []string {
	return []string{"MEDIAGEN_BASE_URL=" + f.url, "MEDIAGEN_API_KEY=" + f.key, "MEDIAGEN_WEBHOOK_SECRET=" + f.secret}
}

// listed waits until listen has begun n more listings than it had at the
// call, so that what it saw before is settled.
func (f *front) listed(t *testing.T, n int64) {
	t.Helper()
	want := f.lists.Load() + n
	require.Eventually(t, func() bool { return f.lists.Load() >= want }, 10*time.Second, 5*time.Millisecond)
}

func (s *counted) create(t *testing.T, f mediagen.Feature, values map[string]any) string {
	t.Helper()
	g, err := s.Client().CreateGeneration(context.Background(), client.RawArgs{FeatureName: f, Values: values})
	require.NoError(t, err)
	return g.ID
}

// hook is one delivery the receiver verified.
type hook struct {
	event  webhook.EventName
	id     string
	at     time.Time
	listed int64 // listings begun when it arrived
}

// hookReceiver is a receiver started as in examples/webhooks: the SDK's
// handler with the project's secret, in front of a recorder. It can answer
// 500 to the first attempts for an id, and counts every attempt.
type hookReceiver struct {
	*httptest.Server
	got      chan hook
	mu       sync.Mutex
	attempts map[string][]time.Time
	bodies   map[string][]byte // id: the last body
	fail     map[string]int    // id: attempts still to refuse
}

func newHookReceiver(t *testing.T, f *front) *hookReceiver {
	t.Helper()
	rc := &hookReceiver{got: make(chan hook, 256), attempts: map[string][]time.Time{}, bodies: map[string][]byte{}, fail: map[string]int{}}
	verified, err := webhook.Handler(f.secret, func(_ context.Context, ev *webhook.Event) error {
		h := hook{event: ev.Name, at: time.Now(), listed: f.lists.Load()}
		if ev.Generation != nil {
			h.id = ev.Generation.ID
		} else {
			h.id = ev.Voice.ID
		}
		rc.got <- h
		return nil
	})
	require.NoError(t, err)
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		var ids struct{ Generation, Voice struct{ ID string } }
		require.NoError(t, json.Unmarshal(body, &ids), string(body))
		id := ids.Generation.ID + ids.Voice.ID
		rc.mu.Lock()
		rc.attempts[id] = append(rc.attempts[id], time.Now())
		rc.bodies[id] = body
		refuse := rc.fail[id] > 0
		rc.fail[id]--
		rc.mu.Unlock()
		if refuse {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		verified.ServeHTTP(w, r)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *hookReceiver) attemptsOf(id string) []time.Time {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]time.Time(nil), rc.attempts[id]...)
}

// receive returns the next n verified deliveries, by id.
func (rc *hookReceiver) receive(t *testing.T, n int) map[string]hook {
	t.Helper()
	out := map[string]hook{}
	for len(out) < n {
		select {
		case h := <-rc.got:
			_, dup := out[h.id]
			require.False(t, dup, "%s delivered twice", h.id)
			out[h.id] = h
		case <-time.After(10 * time.Second):
			t.Fatalf("%d deliveries of %d arrived: %v", len(out), n, out)
		}
	}
	return out
}

// quiet checks that no further delivery reaches any of rcs over a few
// listings.
func quiet(t *testing.T, rcs ...*hookReceiver) {
	t.Helper()
	time.Sleep(3 * interval)
	for _, rc := range rcs {
		select {
		case h := <-rc.got:
			t.Errorf("unexpected delivery %+v", h)
		default:
		}
	}
}

// listening is a running `mediagen listen`.
type listening struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr bytes.Buffer
	exited chan error
}

func startListen(t *testing.T, env []string, args ...string) *listening {
	t.Helper()
	l := &listening{lines: make(chan string, 1024), exited: make(chan error, 1)}
	l.cmd = command(t, t.TempDir(), env, append([]string{"listen", "--interval", interval.String()}, args...)...)
	stdout, err := l.cmd.StdoutPipe()
	require.NoError(t, err)
	l.cmd.Stderr = &l.stderr
	require.NoError(t, l.cmd.Start())
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			l.lines <- sc.Text()
		}
		close(l.lines)
		l.exited <- l.cmd.Wait()
	}()
	t.Cleanup(func() { _ = l.cmd.Process.Kill() })
	return l
}

// stop interrupts listen as Ctrl-C does, checks that it exits 0 with
// nothing on stderr, and returns what it printed.
func (l *listening) stop(t *testing.T) []string {
	t.Helper()
	require.NoError(t, l.cmd.Process.Signal(os.Interrupt))
	var out []string
	for line := range l.lines {
		out = append(out, line)
	}
	select {
	case err := <-l.exited:
		require.NoError(t, err, "exit 0 on SIGINT; stderr: %s", l.stderr.String())
	case <-time.After(10 * time.Second):
		t.Fatal("listen did not stop on SIGINT")
	}
	assert.Empty(t, l.stderr.String())
	return out
}

// TestListen forwards the ends of generations of every kind, failed ones
// included, and of a voice clone, each verified by a receiver with the
// project's secret within one listing interval of the end, once, with
// webhooks off at the server; what ended before the start is not
// forwarded; --events filters; no generation is read one by one.
func TestListen(t *testing.T) {
	t.Parallel()
	s := newCounted(t)
	ctx := context.Background()
	avatar := map[string]any{"voiceId": "ava-warm-narrator", "script": "Hello from the avatar.", "permissionConfirmed": true}

	before := s.create(t, mediagen.FeatureImageGeneration, map[string]any{"prompt": "ended before listen"})
	s.Advance(time.Minute)
	running := s.create(t, mediagen.FeatureVideoAvatar, avatar) // still rendering when listen starts

	fa, fs := s.front(t), s.front(t)
	all, some := newHookReceiver(t, fa), newHookReceiver(t, fs)
	l := startListen(t, fa.env()[:2], "--forward-to", all.URL+"/hooks", "--json", "--webhook-secret", s.WebhookSecret())
	filtered := startListen(t, fs.env(), "--forward-to", some.URL, "--events", "generation.done,voice.error")
	fa.listed(t, 2) // each has read what predates it
	fs.listed(t, 2)

	ids := map[string]webhook.EventName{running: webhook.EventGenerationDone}
	ids[s.create(t, mediagen.FeatureImageGeneration, map[string]any{"prompt": "a kite"})] = webhook.EventGenerationDone
	ids[s.create(t, mediagen.FeatureAudioVoiceover, map[string]any{"voiceId": "ava-warm-narrator", "script": "Hello."})] = webhook.EventGenerationDone
	ids[s.create(t, mediagen.FeatureVideoAvatar, avatar)] = webhook.EventGenerationDone
	thumb := map[string]any{"prompt": "a thumbnail"}
	require.NoError(t, s.SetFaults(clienttest.Faults{RenderError: 1, RenderFeatures: []mediagen.Feature{mediagen.FeatureImageYoutubeThumbnail}}))
	ids[s.create(t, mediagen.FeatureImageYoutubeThumbnail, thumb)] = webhook.EventGenerationError
	require.NoError(t, s.SetFaults(clienttest.Faults{RenderTimeout: 1, RenderFeatures: []mediagen.Feature{mediagen.FeatureImageYoutubeThumbnail}}))
	ids[s.create(t, mediagen.FeatureImageYoutubeThumbnail, thumb)] = webhook.EventGenerationTimeout
	require.NoError(t, s.SetFaults(clienttest.Faults{}))
	sample := media.WAV(12*time.Second, "my voice")
	f, err := upload.Reader(ctx, s.Client(), bytes.NewReader(sample), int64(len(sample)), "audio/wav")
	require.NoError(t, err)
	clone, err := s.Client().CloneVoice(ctx, client.CloneVoiceParams{Name: "My voice", Audio: f.ID})
	require.NoError(t, err)
	ids[clone.ID] = webhook.EventVoiceDone
	fa.listed(t, 2) // each saw them running
	fs.listed(t, 2)

	s.Advance(10 * time.Minute) // every one has ended
	ended, listings := time.Now(), fa.lists.Load()
	got := all.receive(t, len(ids))
	for id, want := range ids {
		h := got[id]
		assert.Equal(t, want, h.event, id)
		assert.Less(t, h.at.Sub(ended), interval+time.Second, "%s arrives within one listing interval", id)
		assert.LessOrEqual(t, h.listed, listings+2, "%s forwarded by a listing that began after the end", id)
		assert.Len(t, all.attemptsOf(id), 1, "%s delivered once", id)
	}
	assert.NotContains(t, got, before)
	filteredGot := some.receive(t, 4)
	for id, h := range filteredGot {
		assert.Equal(t, webhook.EventGenerationDone, h.event, id)
	}
	quiet(t, all, some)
	for _, f := range []*front{fa, fs} {
		assert.Zero(t, f.gets.Load(), "no GET of a generation one by one")
		assert.Zero(t, f.voiceGets.Load(), "no GET of a voice one by one")
		assert.Zero(t, f.pages.Load(), "one page each listing")
	}

	rows := l.stop(t)
	require.Len(t, rows, len(ids))
	for _, line := range rows {
		row := decode[map[string]any](t, line)
		id, _ := row["id"].(string)
		assert.Equal(t, string(ids[id]), row["event"], line)
		assert.Equal(t, 200.0, row["status"], line)
		assert.Equal(t, 1.0, row["attempt"], line)
		assert.Equal(t, true, row["delivered"], line)
		assert.Contains(t, row, "latencyMs")
	}
	rows = filtered.stop(t)
	require.Len(t, rows, 5, "a header and a row each: %q", rows)
	assert.Regexp(t, `^TIME\s+EVENT\s+ID\s+STATUS\s+LATENCY\s+ATTEMPT\s+ERROR$`, rows[0])
	for _, row := range rows[1:] {
		assert.Regexp(t, `^\d\d:\d\d:\d\d  generation\.done\s+gen_\w+\s+200\s+[\d.]+[µm]?s\s+1\s+-$`, row)
	}
}

// TestListenRetries: a delivery refused once is retried once after 2 s; one
// refused twice is dropped, as the service drops it.
func TestListenRetries(t *testing.T) {
	t.Parallel()
	s := newCounted(t)
	f := s.front(t)
	rc := newHookReceiver(t, f)
	l := startListen(t, f.env(), "--forward-to", rc.URL, "--json")
	f.listed(t, 2)
	once := s.create(t, mediagen.FeatureImageGeneration, map[string]any{"prompt": "refused once"})
	twice := s.create(t, mediagen.FeatureImageGeneration, map[string]any{"prompt": "refused twice"})
	rc.mu.Lock()
	rc.fail[once], rc.fail[twice] = 1, 2
	rc.mu.Unlock()
	s.Advance(time.Minute)

	got := rc.receive(t, 1)
	require.Contains(t, got, once)
	for _, id := range []string{once, twice} {
		require.Eventually(t, func() bool { return len(rc.attemptsOf(id)) == 2 }, 5*time.Second, 10*time.Millisecond)
		at := rc.attemptsOf(id)
		assert.InDelta(t, retryDelay.Seconds(), at[1].Sub(at[0]).Seconds(), 0.5, "the retry comes 2 s after")
	}
	time.Sleep(retryDelay) // long enough for a third attempt to show
	quiet(t, rc)
	assert.Len(t, rc.attemptsOf(once), 2, "no further attempt")
	assert.Len(t, rc.attemptsOf(twice), 2, "dropped after the retry")

	type row struct {
		ID        string
		Status    int
		Attempt   int
		Delivered bool
	}
	var rows []row
	for _, line := range l.stop(t) {
		rows = append(rows, decode[row](t, line))
	}
	assert.ElementsMatch(t, []row{
		{once, 500, 1, false}, {once, 200, 2, true}, {twice, 500, 1, false}, {twice, 500, 2, false},
	}, rows)
}

// TestListenFollowsPastTheFirstPage: a render that slides off the first
// page of the list while it runs is still forwarded when it ends, found on
// a later page, and pages beyond the first are read only for it.
func TestListenFollowsPastTheFirstPage(t *testing.T) {
	t.Parallel()
	s := newCounted(t)
	f := s.front(t)
	rc := newHookReceiver(t, f)
	l := startListen(t, f.env(), "--forward-to", rc.URL, "--json")
	f.listed(t, 2)
	long := s.create(t, mediagen.FeatureVideoAvatar, map[string]any{
		"voiceId": "ava-warm-narrator", "script": strings.Repeat("A long script. ", 20), "permissionConfirmed": true,
	})
	f.listed(t, 2)
	s.Advance(40 * time.Second) // older than the listings' margin, still rendering
	images := map[string]bool{}
	for range pageSize {
		images[s.create(t, mediagen.FeatureImageGeneration, map[string]any{"prompt": "a kite"})] = true
	}
	s.Advance(10 * time.Second) // the images end, the video does not
	for id, h := range rc.receive(t, pageSize) {
		assert.True(t, images[id], id)
		assert.Equal(t, webhook.EventGenerationDone, h.event)
	}
	assert.Positive(t, f.pages.Load(), "the video is followed on the second page")

	s.Advance(5 * time.Minute)
	got := rc.receive(t, 1)
	require.Contains(t, got, long)
	assert.Equal(t, webhook.EventGenerationDone, got[long].event)
	pages := f.pages.Load()
	quiet(t, rc)
	assert.Equal(t, pages, f.pages.Load(), "nothing followed: only the first page")
	assert.Zero(t, f.gets.Load())
	assert.Len(t, l.stop(t), pageSize+1)
}

// TestListenRefusedKey: a key the service refuses ends listen at the start
// with exit code 3 and nothing on stdout.
func TestListenRefusedKey(t *testing.T) {
	t.Parallel()
	srv, env := inProcess(t)
	env = append(env, "MEDIAGEN_API_KEY=mg_test_wrong")
	r := run(t, t.TempDir(), env, "", "listen", "--forward-to", srv.URL())
	requireFailure(t, r, exitAuth, "listing generations: GET /v3/generations: 401")
}

// TestListenSendsWhatTheServiceSends compares listen's delivery of a
// generation with the reference server's own, sent to a webhookUrl given
// for this one generation: the same body, byte for byte.
func TestListenSendsWhatTheServiceSends(t *testing.T) {
	t.Parallel()
	s := newCounted(t)
	f := s.front(t)
	forwarded := newHookReceiver(t, f)
	served := make(chan []byte, 1)
	direct := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		served <- body
	}))
	t.Cleanup(direct.Close)
	l := startListen(t, f.env(), "--forward-to", forwarded.URL)
	f.listed(t, 2)
	// Through the front, as listen: output URLs name the host asked.
	g, err := s.Client(client.WithBaseURL(f.url)).CreateGeneration(context.Background(),
		client.ImageGenerationArgs{Prompt: "a kite"}, client.WithWebhookURL(direct.URL))
	require.NoError(t, err)
	s.Advance(time.Minute)
	forwarded.receive(t, 1)
	forwarded.mu.Lock()
	body := forwarded.bodies[g.ID]
	forwarded.mu.Unlock()
	select {
	case want := <-served:
		assert.Equal(t, string(want), string(body))
	case <-time.After(10 * time.Second):
		t.Fatal("the server's own delivery did not come")
	}
	l.stop(t)
}
