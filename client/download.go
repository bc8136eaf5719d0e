package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/mediagen/mediagen-go/internal/engine"
)

// DefaultMaxDownload is the most bytes one downloaded asset may have
// unless [WithMaxDownload] says otherwise: several times the largest output
// the service makes (minutes of 1080p video), so a storage host that sends
// without end cannot fill the disk.
const DefaultMaxDownload = 1 << 30

// WithMaxDownload sets the most bytes one downloaded asset (an output, a
// poster, a preview) may have; n must be positive. A larger one fails
// with an error matching [ErrTooLarge], before anything is written when
// storage states its size, and [Client.SaveOutput] leaves no file.
func WithMaxDownload(n int64) Option {
	return func(s *settings) error {
		if n <= 0 {
			return fmt.Errorf("mediagen: WithMaxDownload(%d): want a positive number of bytes", n)
		}
		s.maxDownload = n
		return nil
	}
}

// Download writes the asset at rawURL, a signed storage URL from an output,
// poster or preview, to w. The API key is never sent to storage. Transient
// failures (a broken connection, 429, 500, 502, 503, 504) are retried under
// the client's retry policy as long as no byte has reached w; after that
// they return a [*StorageError] with Retryable set, since w cannot take the
// bytes again ([Client.SaveOutput] can). A removed asset answers an error
// matching [ErrNotFound], an expired URL one matching [ErrExpired], and one
// larger than [WithMaxDownload] allows ([DefaultMaxDownload]) one matching
// [ErrTooLarge], once w has taken that many bytes at most.
func (c *Client) Download(ctx context.Context, rawURL string, w io.Writer, opts ...Option) error {
	if w == nil {
		return fmt.Errorf("%w: Download needs a writer", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return err
	}
	return c.download(ctx, cfg, rawURL, func(string) (io.Writer, error) { return w, nil }, false)
}

// download GETs rawURL into the writer start returns for each attempt
// answered 200, given the answer's media type, retrying transient failures.
// Only a restartable start can take the bytes again after a transfer broke.
func (c *Client) download(ctx context.Context, cfg *config, rawURL string, start func(mediaType string) (io.Writer, error), restartable bool) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%w: %s is not a storage URL", ErrInvalidArgument, redactURL(rawURL))
	}
	r := &engine.Request{Method: http.MethodGet, URL: *u, Class: engine.Safe, Storage: true, Transfer: true}
	err = c.eng.Do(ctx, &cfg.call, r, func(resp *http.Response) error {
		if resp.StatusCode != http.StatusOK {
			return newStorageError(resp, http.MethodGet, cfg.call.Clock.Now())
		}
		limit := cfg.s.maxDownload
		if resp.ContentLength > limit {
			return fmt.Errorf("mediagen: download: %w", tooLarge("the asset", limit, resp.ContentLength))
		}
		w, err := start(resp.Header.Get("Content-Type"))
		if err != nil {
			return fmt.Errorf("mediagen: download: %w", err)
		}
		cw := &countingWriter{w: w}
		_, err = io.Copy(cw, &capReader{r: resp.Body, limit: limit, what: "the asset"})
		var broke error
		switch {
		case cw.err != nil:
			return fmt.Errorf("mediagen: download: writing: %w", cw.err)
		case errors.Is(err, ErrTooLarge):
			return fmt.Errorf("mediagen: download: %w", err)
		case err != nil:
			broke = fmt.Errorf("reading the asset: %w", redactError(err))
		case resp.ContentLength >= 0 && cw.n != resp.ContentLength:
			broke = fmt.Errorf("got %d of %d bytes", cw.n, resp.ContentLength)
		default:
			return nil
		}
		if cw.n > 0 && !restartable {
			// Only a 200's body reaches w: that answer broke midway, and w
			// cannot take its bytes again.
			return &StorageError{Method: http.MethodGet, StatusCode: http.StatusOK, Retryable: true, Message: broke.Error()}
		}
		return transientError{fmt.Errorf("mediagen: download: %w", broke)}
	})
	var se *engine.SendError
	if errors.As(err, &se) && ctx.Err() == nil {
		err = fmt.Errorf("mediagen: download: %w", err)
	}
	return err
}

// transientError is a failure the same attempt may not meet again: an
// answer cut short.
type transientError struct{ error }

func (e transientError) Unwrap() error { return e.error }

func (transientError) Transient() bool { return true }

// countingWriter counts what reaches w and keeps w's own error apart from
// the network's.
type countingWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil {
		c.err = err
	}
	return n, err
}

// redactURL drops the query of a signed URL, which is its credential.
func redactURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i] + "?…"
	}
	return fmt.Sprintf("%q", raw)
}
