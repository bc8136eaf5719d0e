// Package delivery sends the reference server's signed webhook events the
// way the service does: one POST per event, any 2xx within the acknowledgement
// window counts, otherwise one retry after a pause, then the event is dropped.
//
// Requests are built by the generated callback initiator, so the headers and
// body are the ones the contract describes.
package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/webhook"
)

// Defaults of the interface document.
const (
	DefaultTimeout    = 5 * time.Second // a receiver must answer 2xx within it
	DefaultRetryDelay = 2 * time.Second // the one retry waits this long
	attempts          = 2
)

// Options configure a [Sender]. The zero value uses the documented defaults,
// a plain http.Client and the wall clock.
type Options struct {
	Client     *http.Client     // transport used to reach receivers
	Timeout    time.Duration    // per attempt
	RetryDelay time.Duration    // pause before the single retry
	Now        func() time.Time // the clock that stamps X-Service-Timestamp
	// OnResult, when set, learns how each delivery ended. It runs on the
	// delivery's goroutine after the last attempt.
	OnResult func(Result)
}

// Result is how one delivery ended.
type Result struct {
	URL       string
	Event     string
	Attempts  int   // 1 or 2
	Status    int   // status of the last attempt, 0 when none arrived
	Err       error // transport error of the last attempt, if any
	Delivered bool  // a 2xx arrived within the timeout
}

// Sender delivers events asynchronously. It is safe for concurrent use.
type Sender struct {
	opts      Options
	initiator *api.CallbackInitiator
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
}

// New returns a Sender with opts applied over the defaults.
func New(opts Options) *Sender {
	if opts.Client == nil {
		opts.Client = &http.Client{}
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.RetryDelay <= 0 {
		opts.RetryDelay = DefaultRetryDelay
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	// Never follow a redirect: a 3xx is not an acknowledgement.
	client := *opts.Client
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	ctx, cancel := context.WithCancel(context.Background())
	return &Sender{
		opts:      opts,
		initiator: &api.CallbackInitiator{Client: &client},
		ctx:       ctx,
		cancel:    cancel,
	}
}

// SendGeneration delivers a generation event to url, signed with every
// secret given (the current one first; during a rotation also the previous).
// It returns at once; the body is encoded before it returns, so later changes
// to g do not leak into the delivery.
func (s *Sender) SendGeneration(url string, secrets []string, event string, g *mediagen.Generation) error {
	body, err := json.Marshal(api.GenerationEvent{Event: api.GenerationEventName(event), Generation: *g})
	if err != nil {
		return fmt.Errorf("delivery: encode %s: %w", event, err)
	}
	s.start(url, event, body, secrets, func(ctx context.Context, ts, sig string) (*http.Response, error) {
		params := &api.GenerationEventDeliveryParams{XServiceTimestamp: ts, XServiceSignature: sig}
		return s.initiator.GenerationEventDeliveryWithBody(ctx, url, params, "application/json", bytes.NewReader(body))
	})
	return nil
}

// SendVoice delivers a voice event; see [Sender.SendGeneration].
func (s *Sender) SendVoice(url string, secrets []string, event string, v *mediagen.Voice) error {
	body, err := json.Marshal(api.VoiceEvent{Event: api.VoiceEventName(event), Voice: *v})
	if err != nil {
		return fmt.Errorf("delivery: encode %s: %w", event, err)
	}
	s.start(url, event, body, secrets, func(ctx context.Context, ts, sig string) (*http.Response, error) {
		params := &api.VoiceEventDeliveryParams{XServiceTimestamp: ts, XServiceSignature: sig}
		return s.initiator.VoiceEventDeliveryWithBody(ctx, url, params, "application/json", bytes.NewReader(body))
	})
	return nil
}

// Wait blocks until every delivery started so far has ended.
func (s *Sender) Wait() { s.wg.Wait() }

// Close abandons pending retries and waits for attempts in flight to end.
func (s *Sender) Close() {
	s.cancel()
	s.wg.Wait()
}

type post func(ctx context.Context, timestamp, signature string) (*http.Response, error)

func (s *Sender) start(url, event string, body []byte, secrets []string, send post) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res := s.deliver(url, event, body, secrets, send)
		if s.opts.OnResult != nil {
			s.opts.OnResult(res)
		}
	}()
}

func (s *Sender) deliver(url, event string, body []byte, secrets []string, send post) Result {
	res := Result{URL: url, Event: event}
	for res.Attempts < attempts {
		if res.Attempts > 0 {
			select {
			case <-time.After(s.opts.RetryDelay):
			case <-s.ctx.Done():
				res.Err = s.ctx.Err()
				return res
			}
		}
		res.Attempts++
		res.Status, res.Err = s.attempt(body, secrets, send)
		if res.Err == nil && res.Status >= 200 && res.Status < 300 {
			res.Delivered = true
			return res
		}
	}
	return res
}

// attempt signs at sending time, as the interface document says, so a retry
// carries a fresh timestamp.
func (s *Sender) attempt(body []byte, secrets []string, send post) (int, error) {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeout)
	defer cancel()
	now := s.opts.Now()
	resp, err := send(ctx, strconv.FormatInt(now.Unix(), 10), webhook.SignatureHeader(secrets, now, body))
	if err != nil {
		return 0, err
	}
	// Drain a little so the connection can be reused; the body means nothing.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	return resp.StatusCode, nil
}
