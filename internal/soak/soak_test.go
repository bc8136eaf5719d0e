package soak_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
	"github.com/mediagen/mediagen-go/upload"
)

var (
	calls  = flag.Int("soak.calls", 1000, "CreateGeneration calls in the generation soak")
	clones = flag.Int("soak.clones", 100, "CloneVoice calls in the clone soak")
)

// faultMix is the mix of the issue that found the orphans: 20% of requests
// faulted; 8% dropped after the server processed them, 4% dropped before,
// 8% answered 429, 500, 502 or 503 with a Retry-After of 1 s, far above the
// test client's 10 ms retry cap.
func faultMix() clienttest.Faults {
	return clienttest.Faults{
		Seed:       20261123,
		DropAfter:  0.08,
		DropBefore: 0.04,
		HTTPStatus: 0.08,
		Statuses:   []int{429, 500, 502, 503},
		RetryAfter: time.Second,
	}
}

// ledger collects what callers were handed.
type ledger struct {
	mu      sync.Mutex
	handed  map[string]int // id -> callers handed it
	charged float64        // sum of BalanceUsed handed out
	errs    map[string]int // error kind -> count
}

func newLedger() *ledger { return &ledger{handed: map[string]int{}, errs: map[string]int{}} }

func (l *ledger) record(id string, used float64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		var ue *client.UncertainError
		switch {
		case errors.As(err, &ue):
			l.errs["uncertain"]++
		case errors.Is(err, client.ErrRateLimited):
			l.errs["rate limited"]++
		default:
			l.errs[err.Error()]++
		}
		return
	}
	l.handed[id]++
	l.charged += used
}

func (l *ledger) shared() []string {
	var out []string
	for id, n := range l.handed {
		if n > 1 {
			out = append(out, id)
		}
	}
	return out
}

// TestSoakCreateGeneration: 1,000 calls from 50 goroutines, in groups of
// five identical requests, under the fault mix, with clienttest's default
// client. Every generation the server charged must have been handed to
// exactly one caller, and the balance must reconcile to the cent.
func TestSoakCreateGeneration(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithBalance(1000), clienttest.WithFaults(faultMix()))
	c := srv.Client()
	start := srv.Balance()
	l := newLedger()

	const workers = 50
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				// Groups of five identical requests: the hardest case for
				// telling one caller's generation from another's.
				args := client.ImageGenerationArgs{Prompt: fmt.Sprintf("soak group %d", i/5)}
				g, err := c.CreateGeneration(context.Background(), args)
				if err != nil {
					l.record("", 0, err)
					continue
				}
				l.record(g.ID, g.BalanceUsed, nil)
			}
		})
	}
	for i := range *calls {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	require.NoError(t, srv.SetFaults(clienttest.Faults{}))
	onServer := map[string]float64{}
	for g, err := range c.Generations(context.Background(), client.ListParams{Limit: 100}) {
		require.NoError(t, err)
		onServer[g.ID] = g.BalanceUsed
	}
	t.Logf("%d calls: %d generations handed out, %d on the server, errors %v", *calls, len(l.handed), len(onServer), l.errs)

	assert.Empty(t, l.shared(), "generations handed to two callers")
	var orphans []string
	var serverCharged float64
	for id, used := range onServer {
		serverCharged += used
		if l.handed[id] == 0 {
			orphans = append(orphans, id)
		}
	}
	assert.Empty(t, orphans, "generations charged but handed to nobody")
	assert.Zero(t, l.errs["uncertain"], "the search after an ambiguous failure gave up")
	assert.Equal(t, cents(start-serverCharged), cents(srv.Balance()), "balance reconciles with the generations on the server")
	assert.Equal(t, cents(serverCharged), cents(l.charged), "balance reconciles with what callers were handed")
}

// TestSoakCloneVoice is the same for voice clones, which are also limited to
// five training at once (429 with Retry-After): callers wait for training
// slots through the client's clock, which the test kit advances.
func TestSoakCloneVoice(t *testing.T) {
	srv := clienttest.NewServer(t, clienttest.WithBalance(1000))
	c := srv.Client()
	wav := media.WAV(30*time.Second, "soak")
	sample, err := upload.Reader(context.Background(), c, bytes.NewReader(wav), int64(len(wav)), "audio/wav")
	require.NoError(t, err)
	require.NoError(t, srv.SetFaults(faultMix()))
	start := srv.Balance()
	l := newLedger()

	const workers = 10
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				p := client.CloneVoiceParams{Name: fmt.Sprintf("soak voice %d", i/5), Audio: sample.ID}
				v, err := c.CloneVoice(context.Background(), p)
				// Five train at once: a caller told to come back later lets
				// time pass, as a real one would sleep, and tries again.
				for try := 0; errors.Is(err, client.ErrRateLimited) && try < 50; try++ {
					var apiErr *client.APIError
					wait := time.Second
					if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
						wait = apiErr.RetryAfter
					}
					srv.Advance(wait)
					v, err = c.CloneVoice(context.Background(), p)
				}
				if err != nil {
					l.record("", 0, err)
					continue
				}
				l.record(v.ID, 0, nil)
			}
		})
	}
	for i := range *clones {
		jobs <- i
	}
	close(jobs)
	wg.Wait()

	require.NoError(t, srv.SetFaults(clienttest.Faults{}))
	voices, err := c.Voices(context.Background(), client.VoiceFilter{Owner: mediagen.VoiceOwnerProject})
	require.NoError(t, err)
	t.Logf("%d clone calls: %d handed out, %d on the server, errors %v", *clones, len(l.handed), len(voices), l.errs)

	assert.Empty(t, l.shared(), "clones handed to two callers")
	var orphans []string
	for _, v := range voices {
		if l.handed[v.ID] == 0 {
			orphans = append(orphans, v.ID)
		}
	}
	assert.Empty(t, orphans, "clones charged but handed to nobody")
	assert.Zero(t, l.errs["uncertain"], "the search after an ambiguous failure gave up")
	prices, err := c.Pricing(context.Background())
	require.NoError(t, err)
	est, err := prices.Estimate(client.RawArgs{FeatureName: mediagen.FeatureVoiceClone})
	require.NoError(t, err)
	assert.Equal(t, cents(start-float64(len(voices))*est.Min), cents(srv.Balance()), "one charge per clone on the server")
}

func cents(usd float64) int64 { return int64(math.Round(usd * 100)) }
