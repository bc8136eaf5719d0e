package main

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
	"github.com/mediagen/mediagen-go/webhook"
)

// job is one generation of the mix, the same on every side.
type job struct {
	index   int
	kind    mediagen.Kind
	chars   int // a voiceover's script length
	seconds int // a logo reveal's duration
}

// Voiceover scripts are 200 to 700 characters: 14 to 19 s of render at
// scale 1 (12 s + 1 s per 100 characters), within the hub's first backstop
// for audio (20 s). Logo reveals last 3 to 6 s: 51 to 57 s of render (45 s
// + 2 s per second), within the first backstop for video (60 s).
const (
	minChars, maxChars = 200, 700
	minClip, maxClip   = 3, 6
)

// plan lays out the mix in an order and with scripts and durations drawn
// from seed, so that every side and round creates the same generations.
func plan(m mix, seed uint64) []job {
	rng := rand.New(rand.NewPCG(seed, 0x22))
	var jobs []job
	add := func(k mediagen.Kind, n int) {
		for range n {
			jobs = append(jobs, job{kind: k})
		}
	}
	add(mediagen.KindImage, m.image)
	add(mediagen.KindAudio, m.audio)
	add(mediagen.KindVideo, m.video)
	rng.Shuffle(len(jobs), func(i, j int) { jobs[i], jobs[j] = jobs[j], jobs[i] })
	for i := range jobs {
		jobs[i].index = i
		switch jobs[i].kind {
		case mediagen.KindAudio:
			jobs[i].chars = minChars + rng.IntN(maxChars-minChars+1)
		case mediagen.KindVideo:
			jobs[i].seconds = minClip + rng.IntN(maxClip-minClip+1)
		}
	}
	return jobs
}

// script is n characters of plain speech.
func script(n int) string {
	const s = "Every wait ends when its event arrives; polling is only the backstop. "
	return strings.Repeat(s, n/len(s)+1)[:n]
}

// args returns j's arguments, given a catalog voice and an uploaded logo.
func (j job) args(voiceID, logoID string) client.Args {
	switch j.kind {
	case mediagen.KindAudio:
		return client.VoiceoverArgs{VoiceID: voiceID, Script: script(j.chars)}
	case mediagen.KindVideo:
		return client.LogoRevealArgs{Image: logoID, Prompt: fmt.Sprintf("the logo rises from light, take %d", j.index), Duration: j.seconds}
	}
	return client.ImageGenerationArgs{Prompt: fmt.Sprintf("a lighthouse on a cliff at dusk, take %d", j.index)}
}

// record is what one generation's create and wait gave.
type record struct {
	job
	id           string
	waitStart    time.Time // after the create returned
	returned     time.Time // when the wait returned
	status       mediagen.GenerationStatus
	responseDate time.Time // end of the render, on the server's wall clock
	gets         int       // GETs of this generation
	arrival      time.Time // first delivery of its event at the receiver (hub side)
	handed       time.Time // when that delivery reached the hub, verified
	err          error
}

// lateness is how long after the end of its render the wait returned.
func (r *record) lateness() time.Duration { return r.returned.Sub(r.responseDate) }

// eventToReturn is the time from the event's arrival (or the wait's start,
// when the event came first) to the wait's return, and whether the event
// came before the return at all.
func (r *record) eventToReturn() (time.Duration, bool) {
	if r.arrival.IsZero() || r.arrival.After(r.returned) {
		return 0, false
	}
	from := r.arrival
	if r.waitStart.After(from) {
		from = r.waitStart
	}
	return r.returned.Sub(from), true
}

// sideResult is one side's run on a fresh server.
type sideResult struct {
	side     string
	round    int
	records  []record
	requests int // every API request of the counted client, attempts included
	creates  int
	other    int // requests that were neither a create nor a GET of a generation
	// The receiver's view: deliveries handed to the hub (hub side) or
	// refused (dropped side), and the deliveries the server gave up on.
	delivered, refused int
	serverDropped      int64
}

// measure runs every side cfg.rounds times, the order of the sides turned
// by one each round, each on a fresh server.
func measure(ctx context.Context, cfg config, stdout, stderr io.Writer) ([]*sideResult, error) {
	stderr = &lockedWriter{w: stderr}
	bin := cfg.bin
	if bin == "" {
		dir, cleanup, err := tempDir()
		if err != nil {
			return nil, err
		}
		defer cleanup()
		if bin, err = buildRefserver(ctx, dir, stderr); err != nil {
			return nil, err
		}
	}
	jobs := plan(cfg.mix, cfg.seed)
	fmt.Fprintf(stdout, "hubload: %s per side, render scale %g, %d round(s), sides %s\n",
		cfg.mix, cfg.scale, cfg.rounds, strings.Join(cfg.sides, ","))
	var results []*sideResult
	for r := range cfg.rounds {
		for k := range cfg.sides {
			side := cfg.sides[(r+k)%len(cfg.sides)]
			fmt.Fprintf(stdout, "\n== round %d: %s\n", r+1, side)
			res, err := runSide(ctx, cfg, bin, side, jobs, stderr)
			if res != nil {
				res.round = r + 1
				res.print(stdout)
				results = append(results, res)
			}
			if err != nil {
				return results, fmt.Errorf("round %d, %s: %w", r+1, side, err)
			}
		}
	}
	return results, nil
}

// runSide starts a server, creates the jobs and waits on each of them at
// once, as side says.
func runSide(ctx context.Context, cfg config, bin, side string, jobs []job, stderr io.Writer) (*sideResult, error) {
	srv, err := startServer(ctx, bin, cfg.scale, stderr)
	if err != nil {
		return nil, err
	}
	defer srv.stop()

	// Setup, not counted: a catalog voice and a logo.
	setup, err := client.New(srv.key, client.WithBaseURL(srv.url), client.WithHTTPClient(newHTTPClient(2)))
	if err != nil {
		return nil, err
	}
	voices, err := setup.Voices(ctx, client.VoiceFilter{Owner: mediagen.VoiceOwnerService})
	if err != nil {
		return nil, fmt.Errorf("listing voices: %w", err)
	}
	if len(voices) == 0 {
		return nil, fmt.Errorf("the catalog has no voice")
	}
	logoPNG := logo()
	f, err := upload.Reader(ctx, setup, bytes.NewReader(logoPNG), int64(len(logoPNG)), "image/png")
	if err != nil {
		return nil, fmt.Errorf("uploading the logo: %w", err)
	}

	res := &sideResult{side: side, records: make([]record, len(jobs))}
	var h *hub.Hub
	var hookURL string
	var recv *receiver
	var refused *refuser
	switch side {
	case sideHub:
		if h, err = hub.New(); err != nil {
			return nil, err
		}
		if recv, err = newReceiver(srv.secret, h); err != nil {
			return nil, err
		}
		ts := httptest.NewServer(recv)
		defer ts.Close()
		hookURL = ts.URL
	case sideDropped:
		if h, err = hub.New(); err != nil { // it never hears of an event
			return nil, err
		}
		refused = &refuser{}
		ts := httptest.NewServer(refused)
		defer ts.Close()
		hookURL = ts.URL
	}
	count := &counter{gets: map[string]int{}}
	c, err := client.New(srv.key, client.WithBaseURL(srv.url), client.WithHTTPClient(newHTTPClient(len(jobs))),
		client.WithMiddleware(count.middleware))
	if err != nil {
		return nil, err
	}

	creating := make(chan struct{}, cfg.creating)
	var wg sync.WaitGroup
	for i, j := range jobs {
		rec := &res.records[i]
		rec.job = j
		wg.Go(func() {
			select {
			case creating <- struct{}{}:
			case <-ctx.Done():
				rec.err = ctx.Err()
				return
			}
			var opts []client.Option
			if hookURL != "" {
				opts = append(opts, client.WithWebhookURL(hookURL))
			}
			g, err := c.CreateGeneration(ctx, j.args(voices[j.index%len(voices)].ID, f.ID), opts...)
			<-creating
			if err != nil {
				rec.err = fmt.Errorf("create: %w", err)
				return
			}
			rec.id = g.ID
			var wait []poll.Option
			if h != nil {
				wait = append(wait, poll.WithHub(h), poll.WithKind(g.Kind))
			}
			rec.waitStart = time.Now()
			got, err := poll.Generation(ctx, c, g.ID, wait...)
			rec.returned = time.Now()
			if got != nil {
				rec.status, rec.responseDate = got.Status, got.ResponseDate
			}
			if err != nil {
				rec.err = fmt.Errorf("wait on %s: %w", g.ID, err)
			}
		})
	}
	wg.Wait()

	count.mu.Lock()
	res.requests, res.creates = count.total, count.creates
	gets := 0
	for i := range res.records {
		r := &res.records[i]
		r.gets = count.gets[r.id]
		gets += r.gets
	}
	res.other = res.requests - res.creates - gets
	count.mu.Unlock()
	if recv != nil {
		recv.mu.Lock()
		for i := range res.records {
			r := &res.records[i]
			r.arrival, r.handed = recv.arrival[r.id], recv.handed[r.id]
		}
		res.delivered = recv.delivered
		recv.mu.Unlock()
	}
	if refused != nil {
		refused.mu.Lock()
		res.refused = refused.n
		refused.mu.Unlock()
	}
	res.serverDropped = srv.dropped.Load()
	var failed []string
	for _, r := range res.records {
		if r.err != nil || r.status != mediagen.GenerationStatusDone {
			failed = append(failed, fmt.Sprintf("#%d %s %s: status %q, %v", r.index, r.kind, r.id, r.status, r.err))
		}
	}
	if len(failed) > 0 {
		return res, fmt.Errorf("%d of %d waits did not end done: %s", len(failed), len(jobs), strings.Join(failed, "; "))
	}
	return res, nil
}

// counter counts the API requests of a client, each attempt on its own.
type counter struct {
	mu      sync.Mutex
	total   int
	creates int
	gets    map[string]int // by generation id
}

func (k *counter) middleware(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	k.mu.Lock()
	k.total++
	switch _, rest, found := strings.Cut(req.URL.Path, "/v3/generations"); {
	case !found:
	case req.Method == http.MethodPost && rest == "":
		k.creates++
	case req.Method == http.MethodGet && strings.HasPrefix(rest, "/") && len(rest) > 1:
		k.gets[rest[1:]]++
	}
	k.mu.Unlock()
	return next(req)
}

// arrivalKey carries, in a delivery's context, when the receiver got it.
type arrivalKey struct{}

// receiver is webhook.Handler(secret, hub.Deliver), stamping when each
// generation's event first arrived and when it reached the hub.
type receiver struct {
	h         http.Handler
	mu        sync.Mutex
	arrival   map[string]time.Time
	handed    map[string]time.Time
	delivered int
}

func newReceiver(secret string, h *hub.Hub) (*receiver, error) {
	rc := &receiver{arrival: map[string]time.Time{}, handed: map[string]time.Time{}}
	var err error
	rc.h, err = webhook.Handler(secret, func(ctx context.Context, ev *webhook.Event) error {
		if ev.Generation != nil {
			now := time.Now()
			at, _ := ctx.Value(arrivalKey{}).(time.Time)
			rc.mu.Lock()
			if _, seen := rc.arrival[ev.Generation.ID]; !seen {
				rc.arrival[ev.Generation.ID], rc.handed[ev.Generation.ID] = at, now
			}
			rc.delivered++
			rc.mu.Unlock()
		}
		return h.Deliver(ctx, ev)
	})
	return rc, err
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rc.h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), arrivalKey{}, time.Now())))
}

// refuser answers 500 to every delivery: every webhook is dropped.
type refuser struct {
	mu sync.Mutex
	n  int
}

func (rf *refuser) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	rf.mu.Lock()
	rf.n++
	rf.mu.Unlock()
	http.Error(w, "dropped on purpose", http.StatusInternalServerError)
}

// logo is a 256x256 PNG: a square on a dark ground.
func logo() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 256, 256))
	for y := range 256 {
		for x := range 256 {
			c := color.RGBA{0x10, 0x18, 0x20, 0xff}
			if x >= 64 && x < 192 && y >= 64 && y < 192 {
				c = color.RGBA{0xf0, 0xa0, 0x20, 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img) // writing to memory cannot fail
	return b.Bytes()
}
