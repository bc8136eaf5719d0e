package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// Defaults used when the matching option is not given.
const (
	// DefaultTolerance is how far a timestamp may lie from the receiver's clock, either way.
	DefaultTolerance = 5 * time.Minute
	// DefaultMaxBodyBytes caps the body Handler reads; events are a few kilobytes.
	DefaultMaxBodyBytes = 1 << 20
	// DefaultAckTimeout is how long Handler waits for an inline callback before
	// acknowledging anyway, a margin inside the service's 5-second window.
	DefaultAckTimeout = 4 * time.Second
	// DefaultReadTimeout is how long Handler waits for a body, leaving time in
	// the 5-second window to verify and answer.
	DefaultReadTimeout = 3 * time.Second
	// DefaultStoreSize is the number of delivery ids Handler's default store remembers.
	DefaultStoreSize = 10000
)

// Option configures Verify, Parse and Handler. Every invalid value is
// reported, joined, in an error wrapping ErrInvalidOption; nil options are
// skipped. Verify and Parse ignore Handler's options but still check them.
type Option func(*options) error

type options struct {
	tolerance    time.Duration
	now          func() time.Time
	secrets      []string
	maxBodyBytes int64
	store        Store // nil: no duplicate detection
	storeSet     bool  // WithStore was given; else Handler makes a MemoryStore
	workers      int   // 0 processes inline
	queue        int
	ackTimeout   time.Duration
	readTimeout  time.Duration
	onError      func(context.Context, *Event, error)
}

func newOptions(secret string, opts []Option, errs ...error) (*options, error) {
	o := &options{
		tolerance:    DefaultTolerance,
		now:          time.Now,
		secrets:      appendSecrets(nil, secret),
		maxBodyBytes: DefaultMaxBodyBytes,
		ackTimeout:   DefaultAckTimeout,
		readTimeout:  DefaultReadTimeout,
		onError:      logError,
	}
	errs = append(errs, apply(o, opts)...)
	if len(o.secrets) == 0 {
		errs = append(errs, ErrNoSecret)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

// apply runs the non-nil opts on t and returns their errors.
func apply[T any, O ~func(T) error](t T, opts []O) []error {
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(t); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func invalidOption(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}

// appendSecrets drops empty and repeated secrets, so each key is hashed once.
func appendSecrets(dst []string, secrets ...string) []string {
	for _, s := range secrets {
		if s != "" && !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// positive returns an option setting *field to v, refusing v <= 0 in the name of opt.
func positive[S any, T int | int64 | time.Duration](opt string, v T, field func(S) *T) func(S) error {
	return func(o S) error {
		if v <= 0 {
			return invalidOption("%s(%v): must be positive", opt, v)
		}
		*field(o) = v
		return nil
	}
}

// WithTolerance sets how far the timestamp may lie from now, either way
// (default DefaultTolerance). Checking it, which stops replays, cannot be turned off.
func WithTolerance(d time.Duration) Option {
	return positive("WithTolerance", d, func(o *options) *time.Duration { return &o.tolerance })
}

// WithNow sets the clock the timestamp is checked against, for tests.
func WithNow(now func() time.Time) Option {
	return func(o *options) error {
		if now == nil {
			return invalidOption("WithNow(nil)")
		}
		o.now = now
		return nil
	}
}

// WithSecrets adds secrets accepted besides the positional one, for a
// rotation: the new and the old, until the service's 24-hour overlap ends.
// Empty values are ignored; each secret costs one HMAC pass over the body.
func WithSecrets(secrets ...string) Option {
	return func(o *options) error {
		o.secrets = appendSecrets(o.secrets, secrets...)
		return nil
	}
}

// WithMaxBodyBytes caps the body Handler reads (default DefaultMaxBodyBytes);
// a larger body is answered 413 before any verification.
func WithMaxBodyBytes(n int64) Option {
	return positive("WithMaxBodyBytes", n, func(o *options) *int64 { return &o.maxBodyBytes })
}

// WithStore sets where Handler records the deliveries it took, to drop
// repeats (default: a MemoryStore per Handler; replicas share an SQLStore).
// Nil turns duplicate detection off.
func WithStore(s Store) Option {
	return func(o *options) error {
		o.store, o.storeSet = s, true
		return nil
	}
}

// WithAsync makes Handler acknowledge a verified delivery at once (202) and
// run the callback after, at most workers at a time with up to queue more
// waiting, else answer 503 so the service retries.
func WithAsync(workers, queue int) Option {
	return func(o *options) error {
		if workers < 1 || queue < 0 {
			return invalidOption("WithAsync(%d, %d): need at least one worker and a non-negative queue", workers, queue)
		}
		o.workers, o.queue = workers, queue
		return nil
	}
}

// WithAckTimeout sets how long Handler may take to answer from the start of
// the request (default DefaultAckTimeout): a callback still running then is
// acknowledged 202 and goes on; a Store.Claim sees its context end (500).
func WithAckTimeout(d time.Duration) Option {
	return positive("WithAckTimeout", d, func(o *options) *time.Duration { return &o.ackTimeout })
}

// WithReadTimeout sets how long Handler may take to read a body from the start
// of the request (default DefaultReadTimeout), so a trickling sender cannot
// hold it past the 5-second window: then it answers 408 without the callback.
func WithReadTimeout(d time.Duration) Option {
	return positive("WithReadTimeout", d, func(o *options) *time.Duration { return &o.readTimeout })
}

// WithErrorFunc sets where Handler reports errors, as its answers carry none:
// refused deliveries (ev is nil), store and callback failures. The default logs
// with slog.Default.
func WithErrorFunc(fn func(ctx context.Context, ev *Event, err error)) Option {
	return func(o *options) error {
		if fn == nil {
			return invalidOption("WithErrorFunc(nil)")
		}
		o.onError = fn
		return nil
	}
}
