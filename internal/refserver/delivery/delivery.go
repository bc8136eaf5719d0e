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
	// OnAttempt, when set, learns of each attempt as soon as it ended, with
	// the delivery so far. It runs on the delivery's goroutine.
	OnAttempt func(Result)
}

// Result is how one delivery ended, or stands after an attempt.
type Result struct {
	URL       string
	Event     string
	Subject   string    // id of the generation or voice the event is about
	Attempts  int       // 1 or 2
	Status    int       // status of the last attempt, 0 when none arrived
	Err       error     // transport error of the last attempt, if any
	Delivered bool      // a 2xx arrived within the timeout
	Tries     []Attempt // every attempt so far, in order
}

// Attempt is one POST of a delivery: the signature headers it carried and
// the receiver's answer.
type Attempt struct {
	Timestamp string        // X-Service-Timestamp sent
	Signature string        // X-Service-Signature sent
	Status    int           // 0 when no answer arrived
	Err       error         // transport error, if any
	Latency   time.Duration // from sending to the answer's headers or the error
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
	s.start(url, event, g.ID, body, secrets, func(ctx context.Context, ts, sig string) (*http.Response, error) {
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
	s.start(url, event, v.ID, body, secrets, func(ctx context.Context, ts, sig string) (*http.Response, error) {
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

func (s *Sender) start(url, event, subject string, body []byte, secrets []string, send post) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		res := s.deliver(Result{URL: url, Event: event, Subject: subject}, body, secrets, send)
		if s.opts.OnResult != nil {
			s.opts.OnResult(res)
		}
	}()
}

func (s *Sender) deliver(res Result, body []byte, secrets []string, send post) Result {
	for res.Attempts < attempts {
		if res.Attempts > 0 {
			select {
			case <-time.After(s.opts.RetryDelay):
			case <-s.ctx.Done():
				res.Err = s.ctx.Err()
				return res
			}
		}
		a := s.attempt(body, secrets, send)
		res.Attempts++
		res.Status, res.Err = a.Status, a.Err
		res.Tries = append(res.Tries, a)
		if s.opts.OnAttempt != nil {
			// A copy, so the observer may keep it while the next attempt runs.
			s.opts.OnAttempt(Result{URL: res.URL, Event: res.Event, Subject: res.Subject, Attempts: res.Attempts,
				Status: res.Status, Err: res.Err, Delivered: res.Err == nil && res.Status >= 200 && res.Status < 300,
				Tries: append([]Attempt(nil), res.Tries...)})
		}
		if res.Err == nil && res.Status >= 200 && res.Status < 300 {
			res.Delivered = true
			return res
		}
	}
	return res
}

// attempt signs at sending time, as the interface document says, so a retry
// carries a fresh timestamp.
func (s *Sender) attempt(body []byte, secrets []string, send post) Attempt {
	ctx, cancel := context.WithTimeout(s.ctx, s.opts.Timeout)
	defer cancel()
	now := s.opts.Now()
	a := Attempt{Timestamp: strconv.FormatInt(now.Unix(), 10), Signature: webhook.SignatureHeader(secrets, now, body)}
	began := time.Now() // the wall clock: latency is real even under a fake clock
	resp, err := send(ctx, a.Timestamp, a.Signature)
	a.Latency = time.Since(began)
	if err != nil {
		a.Err = err
		return a
	}
	// Drain a little so the connection can be reused; the body means nothing.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	a.Status = resp.StatusCode
	return a
}
