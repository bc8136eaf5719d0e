// Package link carries what packages upload and poll, and the test kit,
// need from a *client.Client beyond its exported methods: the multipart
// route, the storage HTTP client, the retry settings, the logger and the
// clock. Package client installs the functions at init; nothing outside
// this module can reach them.
package link

import (
	"context"
	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/wait"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// Clock is where the SDK reads the time and waits. The test kit replaces
// it, so that a wait in a user's test moves the reference server's clock
// instead of the wall clock.
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends, returning ctx.Err() then.
	Sleep(ctx context.Context, d time.Duration) error
}

// RealClock is the wall clock.
type RealClock struct{}

// Now returns time.Now().
func (RealClock) Now() time.Time { return time.Now() }

// Sleep waits d or until ctx ends.
func (RealClock) Sleep(ctx context.Context, d time.Duration) error { return wait.Sleep(ctx, d) }

// Retry is a client's resolved retry settings.
type Retry struct {
	MaxRetries       int
	WaitMin, WaitMax time.Duration
}

// Client is the inside of one *client.Client, resolved for one call's
// options.
type Client struct {
	// UploadFiles sends a multipart body once, streamed.
	UploadFiles func(ctx context.Context, contentType string, body io.Reader) ([]mediagen.File, error)
	// Storage sends requests to storage URLs: never the API key, never the
	// caller's extra headers, with the caller's middleware and timeout.
	Storage *http.Client
	Retry   Retry
	Logger  *slog.Logger
	Clock   Clock
	// Observe, when not nil, is given every storage answer a call
	// receives, for client.WithResponseInto.
	Observe func(*http.Response)
}

// Installed by package client.
var (
	// Of returns the inside of c, a *client.Client, with opts (client.Option
	// values) applied; it fails when an option is invalid.
	Of func(c any, opts ...any) (*Client, error)
	// WithClock returns a client.Option that makes the client, and upload
	// and poll acting for it, read the time from clk and wait on it.
	WithClock func(clk Clock) any
)
