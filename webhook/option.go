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
	// DefaultTolerance is how far a delivery's timestamp may lie from the
	// receiver's clock, in either direction: the age the interface suggests.
	DefaultTolerance = 5 * time.Minute

	// DefaultMaxBodyBytes caps the body Handler reads. Events are a few
	// kilobytes; the cap leaves room for long echoed arguments.
	DefaultMaxBodyBytes = 1 << 20

	// DefaultAckTimeout is how long Handler waits for an inline callback before
	// acknowledging anyway, leaving a margin inside the service's 5-second window.
	DefaultAckTimeout = 4 * time.Second

	// DefaultReadTimeout is how long Handler waits for a delivery's body,
	// leaving time inside the service's 5-second window to verify it and
	// answer.
	DefaultReadTimeout = 3 * time.Second

	// DefaultStoreSize is the number of delivery ids Handler's default store remembers.
	DefaultStoreSize = 10000
)

// maxEntries caps the signature entries examined, so a huge header costs little.
const maxEntries = 16

// Option configures Verify, Parse and Handler. An option given a value it
// cannot use returns an error wrapping ErrInvalidOption that names it; all
// such errors are reported, joined, and nil options are skipped. Options of
// Handler alone have no effect on Verify and Parse, though an invalid value
// is still reported.
type Option func(*options) error

type options struct {
	tolerance    time.Duration
	now          func() time.Time
	secrets      []string
	maxBodyBytes int64
	store        Store
	storeSet     bool
	workers      int // 0 processes inline
	queue        int
	ackTimeout   time.Duration
	readTimeout  time.Duration
	onError      func(context.Context, *Event, error)
}

// newOptions applies opts over the defaults. Empty and repeated secrets are
// dropped, so each distinct key is hashed once.
func newOptions(secret string, opts []Option) (*options, error) {
	o := &options{
		tolerance:    DefaultTolerance,
		now:          time.Now,
		maxBodyBytes: DefaultMaxBodyBytes,
		ackTimeout:   DefaultAckTimeout,
		readTimeout:  DefaultReadTimeout,
		onError:      logError,
	}
	o.secrets = appendSecrets(nil, secret)
	var errs []error
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			errs = append(errs, err)
		}
	}
	if len(o.secrets) == 0 {
		errs = append(errs, ErrNoSecret)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return o, nil
}

func invalidOption(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalidOption}, args...)...)
}

func appendSecrets(dst []string, secrets ...string) []string {
	for _, s := range secrets {
		if s != "" && !slices.Contains(dst, s) {
			dst = append(dst, s)
		}
	}
	return dst
}

// WithTolerance sets how far the timestamp may lie from now, in the past or
// in the future; d must be positive. The default is DefaultTolerance.
// Checking the age cannot be turned off: it is what stops a replayed delivery.
func WithTolerance(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalidOption("WithTolerance(%v): tolerance must be positive", d)
		}
		o.tolerance = d
		return nil
	}
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

// WithSecrets adds secrets accepted besides the one passed positionally, for
// a secret rotation: configure the new and the old secret together, so a
// delivery passes whichever of them signed it, and drop the old one when the
// service's 24-hour overlap ends. Empty values are ignored. Each secret costs
// one HMAC pass over the body.
func WithSecrets(secrets ...string) Option {
	return func(o *options) error {
		o.secrets = appendSecrets(o.secrets, secrets...)
		return nil
	}
}

// WithMaxBodyBytes caps the body Handler reads; a larger body is answered
// 413 before any verification. The default is DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) Option {
	return func(o *options) error {
		if n <= 0 {
			return invalidOption("WithMaxBodyBytes(%d): limit must be positive", n)
		}
		o.maxBodyBytes = n
		return nil
	}
}

// WithStore sets where Handler records the deliveries it has taken, to drop
// duplicates. The default is a MemoryStore of DefaultStoreSize ids per
// Handler; receivers running several replicas share a store instead, such
// as an SQLStore. A nil store turns duplicate detection off.
func WithStore(s Store) Option {
	return func(o *options) error {
		o.store, o.storeSet = s, true
		return nil
	}
}

// WithAsync makes Handler acknowledge a verified delivery at once (202) and
// run the callback afterwards, at most workers at a time with up to queue
// more waiting. When all are busy the delivery is answered 503 so the service
// retries it. A callback failure can then no longer be answered to the
// service: it goes to the WithErrorFunc callback. Without WithAsync the
// callback runs inline (see WithAckTimeout).
func WithAsync(workers, queue int) Option {
	return func(o *options) error {
		if workers < 1 || queue < 0 {
			return invalidOption("WithAsync(%d, %d): need at least one worker and a non-negative queue", workers, queue)
		}
		o.workers, o.queue = workers, queue
		return nil
	}
}

// WithAckTimeout sets how long Handler may take to answer a delivery,
// counted from the moment it starts serving the request: reading the body
// and claiming the id in the Store count against it. When an inline callback
// is still running at that point, the delivery is acknowledged 202 so that
// the service does not time out and resend it, and the callback goes on; a
// later failure goes to the WithErrorFunc callback. A Store.Claim still
// running then sees its context end, and the delivery is answered 500. The
// default is DefaultAckTimeout.
func WithAckTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalidOption("WithAckTimeout(%v): timeout must be positive", d)
		}
		o.ackTimeout = d
		return nil
	}
}

// WithReadTimeout sets how long Handler may take to read a delivery's body,
// counted from the moment it starts serving the request; d must be
// positive. A body not complete by then is answered 408 and the callback
// does not run, so a sender trickling bytes cannot hold the receiver past
// the service's 5-second window (the service retries once). Handler sets
// the bound as the connection's read deadline where the server allows it,
// and keeps it on its own where it does not (a ResponseWriter wrapper
// without Unwrap). The default is DefaultReadTimeout.
func WithReadTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return invalidOption("WithReadTimeout(%v): timeout must be positive", d)
		}
		o.readTimeout = d
		return nil
	}
}

// WithErrorFunc sets the function Handler reports errors to: rejected
// deliveries (ev is nil; err wraps one of the package's errors), store
// failures, and callback failures, including those after the delivery was
// acknowledged. It is the only place those details appear, since the HTTP
// answer carries none. The default logs them with slog.Default.
func WithErrorFunc(fn func(ctx context.Context, ev *Event, err error)) Option {
	return func(o *options) error {
		if fn == nil {
			return invalidOption("WithErrorFunc(nil)")
		}
		o.onError = fn
		return nil
	}
}
