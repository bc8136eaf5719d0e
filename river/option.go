package riverjob

import (
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Option configures NewWorker.
type Option func(*Worker) error

// WithSaveTo sets the folder outputs are saved in for jobs whose Args name
// none.
func WithSaveTo(dir string) Option {
	return func(w *Worker) error { w.saveTo = dir; return nil }
}

// WithWebhookURL asks the service to send each job's terminal event to u,
// where a Waker makes the job available at once; the jobs then check only
// as a backstop, for events that were lost: once a render of the kind is
// normally over, then every poll.BackstopInterval.
func WithWebhookURL(u string) Option {
	return func(w *Worker) error {
		if u == "" {
			return errors.New("riverjob: empty webhook URL")
		}
		w.webhook = u
		return nil
	}
}

// WithTimeout sets how long one attempt may run (default DefaultTimeout).
func WithTimeout(d time.Duration) Option {
	return func(w *Worker) error {
		if d <= 0 {
			return fmt.Errorf("riverjob: timeout %v: must be positive", d)
		}
		w.timeout = d
		return nil
	}
}

// WithLogger sets where the worker logs the failures it works around (a
// sweep, a price list read); the default is slog.Default().
func WithLogger(l *slog.Logger) Option {
	return func(w *Worker) error {
		if l == nil {
			return errors.New("riverjob: nil logger")
		}
		w.logger = l
		return nil
	}
}
