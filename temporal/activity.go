package mediagentemporal

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/poll"
)

// The types of the non-retryable application errors the activity fails with.
const (
	// ErrorFailed: the render ended in error or timeout and was refunded;
	// the details are a Failure.
	ErrorFailed = "mediagen.Failed"
	// ErrorGone: the generation expired or was deleted before its result was
	// read; the details are a Failure.
	ErrorGone = "mediagen.Gone"
	// ErrorRefused: the service or the client refused the request (invalid
	// arguments, no permission, a key reused with other arguments); nothing
	// was charged and a retry would be refused the same way.
	ErrorRefused = "mediagen.Refused"
)

// DefaultHeartbeat is how often a waiting activity heartbeats when its
// HeartbeatTimeout is not set; with one, it heartbeats three times per timeout.
const DefaultHeartbeat = 10 * time.Second

// Request is one generation for Activities.Generate.
type Request struct {
	// Feature is the feature to run, such as "image/generation".
	Feature mediagen.Feature `json:"feature"`
	// Args are the feature's arguments, as the service takes them.
	Args map[string]any `json:"args"`
	// Key is the idempotency key; "" derives it from the workflow id and
	// the activity id (see Key). Set it when a workflow that continues as
	// new, or is reset, must not reuse its previous run's generations.
	Key string `json:"key,omitempty"`
	// SaveTo is a folder on the worker where the output is saved before
	// the activity completes; "" saves nothing.
	SaveTo string `json:"saveTo,omitempty"`
}

// Result is what Activities.Generate returns.
type Result struct {
	Generation *mediagen.Generation `json:"generation"`
	// Key is the idempotency key the generation was submitted with.
	Key string `json:"key"`
	// Saved says where the output was saved; nil without Request.SaveTo.
	Saved *client.SavedOutput `json:"saved,omitempty"`
}

// Failure is the detail of an ErrorFailed or ErrorGone application error.
type Failure struct {
	GenerationID string `json:"generationId"`
	Status       string `json:"status"`
	Reason       string `json:"reason"`
}

// Activities holds the activity Generate; register it with a worker
// (worker.RegisterActivity). It is safe for concurrent use.
type Activities struct {
	c      *client.Client
	hub    *hub.Hub
	tokens TokenStore
	poll   []poll.Option
}

// Option configures New.
type Option func(*Activities) error

// WithHub makes waits end as soon as the hub receives the generation's
// verified terminal event; polling stays as a backstop.
func WithHub(h *hub.Hub) Option {
	return func(a *Activities) error {
		if h == nil {
			return errors.New("mediagentemporal: WithHub: nil hub")
		}
		a.hub = h
		return nil
	}
}

// WithPollOptions adds options to every wait, such as poll.WithMaxWait or
// poll.WithClientOptions.
func WithPollOptions(opts ...poll.Option) Option {
	return func(a *Activities) error {
		if err := poll.CheckOptions(opts...); err != nil {
			return err
		}
		a.poll = append(a.poll, opts...)
		return nil
	}
}

// WithAsyncCompletion makes Generate complete asynchronously: it submits,
// records its task token in s and returns activity.ErrResultPending, and the
// webhook receiver's Completer completes it. A pending activity cannot
// heartbeat: give it a StartToCloseTimeout a little over the render's
// expected time, and no HeartbeatTimeout.
func WithAsyncCompletion(s TokenStore) Option {
	return func(a *Activities) error {
		if s == nil {
			return errors.New("mediagentemporal: WithAsyncCompletion: nil store")
		}
		a.tokens = s
		return nil
	}
}

// New returns the activities, submitting and waiting through c.
func New(c *client.Client, opts ...Option) (*Activities, error) {
	if c == nil {
		return nil, errors.New("mediagentemporal: nil client")
	}
	a := &Activities{c: c}
	var errs []error
	for _, o := range opts {
		if o == nil {
			errs = append(errs, errors.New("mediagentemporal: nil option"))
			continue
		}
		errs = append(errs, o(a))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return a, nil
}

// Key returns the idempotency key of the running activity: "temporal:" then
// the workflow id and the activity id, which every attempt shares, hashed
// when longer than client.MaxIdempotencyKey.
func Key(ctx context.Context) string {
	info := activity.GetInfo(ctx)
	k := "temporal:" + info.WorkflowExecution.ID + "/" + info.ActivityID
	if len(k) > client.MaxIdempotencyKey {
		sum := sha256.Sum256([]byte(k))
		k = "temporal:" + hex.EncodeToString(sum[:])
	}
	return k
}

// Generate submits req, charged once per key, and waits for it: for the
// generation's verified event with WithHub, polling as a backstop. It then
// saves the output when req.SaveTo is set. An attempt that starts with
// heartbeat details (a previous attempt's generation id) waits for that
// generation without submitting. With WithAsyncCompletion it returns
// activity.ErrResultPending instead of waiting.
func (a *Activities) Generate(ctx context.Context, req Request) (*Result, error) {
	if req.Feature == "" {
		return nil, temporal.NewNonRetryableApplicationError("mediagentemporal: request has no feature", ErrorRefused, nil)
	}
	key := req.Key
	if key == "" {
		key = Key(ctx)
	}
	var id string
	if activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &id) // unreadable details: submit, the key still guards
	}
	if id == "" {
		g, err := a.c.CreateGeneration(ctx, client.RawArgs{FeatureName: req.Feature, Values: req.Args}, client.WithIdempotencyKey(key))
		if err != nil {
			return nil, refused(err)
		}
		id = g.ID
		activity.RecordHeartbeat(ctx, id)
	}
	if a.tokens != nil {
		return a.pend(ctx, id, key, req.SaveTo)
	}
	stop := heartbeat(ctx, id)
	defer stop() // through the save too, which may outlast the HeartbeatTimeout
	g, err := poll.Generation(ctx, a.c, id, a.pollOptions()...)
	if err != nil {
		return nil, ended(err)
	}
	return finish(ctx, a.c, g, key, req.SaveTo)
}

func (a *Activities) pollOptions() []poll.Option {
	if a.hub == nil {
		return a.poll
	}
	return append([]poll.Option{poll.WithHub(a.hub)}, a.poll...)
}

// heartbeat records id until stop is called, so that Temporal sees the worker
// alive and can deliver a cancellation while the wait sleeps.
func heartbeat(ctx context.Context, id string) (stop func()) {
	every := DefaultHeartbeat
	if t := activity.GetInfo(ctx).HeartbeatTimeout; t > 0 {
		every = t / 3
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, id)
			}
		}
	}()
	return func() { close(done) }
}

// refused makes the submit errors a retry cannot cure non-retryable; other
// errors are left to Temporal's retry policy, which the key makes safe.
func refused(err error) error {
	for _, r := range []error{client.ErrInvalidArgument, client.ErrUnauthorized, client.ErrPermissionRequired, client.ErrIdempotencyMismatch} {
		if errors.Is(err, r) {
			return temporal.NewNonRetryableApplicationError(err.Error(), ErrorRefused, err)
		}
	}
	return err
}

// ended turns a wait's end into the activity's error: a failed render or a
// vanished generation is final, anything else (the wait gave up, a save
// failed) is retried and resumes from the heartbeat.
func ended(err error) error {
	var failed *poll.FailedError
	if errors.As(err, &failed) {
		return failure(failed.Generation)
	}
	var gone *poll.GoneError
	if errors.As(err, &gone) {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrorGone, err, Failure{GenerationID: gone.ID, Reason: err.Error()})
	}
	return err
}

// failure is the non-retryable error of a render that ended in error or
// timeout.
func failure(g *mediagen.Generation) error {
	f := Failure{GenerationID: g.ID, Status: string(g.Status), Reason: g.Error}
	msg := fmt.Sprintf("mediagentemporal: generation %s ended in %s (refunded): %s", g.ID, g.Status, g.Error)
	return temporal.NewNonRetryableApplicationError(msg, ErrorFailed, nil, f)
}

// finish returns the result of a terminal generation, saving its output into
// dir when dir is set.
func finish(ctx context.Context, c *client.Client, g *mediagen.Generation, key, dir string) (*Result, error) {
	if g.Status != mediagen.GenerationStatusDone {
		return nil, failure(g)
	}
	res := &Result{Generation: g, Key: key}
	if dir != "" {
		saved, err := c.SaveOutput(ctx, g, dir, client.WithIdempotencyKey(key))
		if err != nil {
			return nil, err
		}
		res.Saved = saved
	}
	return res, nil
}
