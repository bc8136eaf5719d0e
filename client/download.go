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

// DefaultMaxDownload is the most bytes one downloaded asset may have unless
// [WithMaxDownload] says otherwise: several times the largest output, so a
// storage host that sends without end cannot fill the disk.
const DefaultMaxDownload = 1 << 30

// WithMaxDownload sets the most bytes one downloaded asset may have; n must
// be positive. A larger asset fails with an error matching [ErrTooLarge],
// before anything is written when storage states its size, and
// [Client.SaveOutput] leaves no file.
func WithMaxDownload(n int64) Option {
	return func(s *settings) error {
		if n <= 0 {
			return fmt.Errorf("mediagen: WithMaxDownload(%d): want a positive number of bytes", n)
		}
		s.maxDownload = n
		return nil
	}
}

// Download writes the asset at rawURL, a signed storage URL, to w, never
// sending the API key. Transient failures are retried until a byte reached
// w, then returned as a [*StorageError] with Retryable set. A removed asset
// matches [ErrNotFound], an expired URL [ErrExpired], and an asset over
// [WithMaxDownload] [ErrTooLarge].
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

// download GETs rawURL into the writer start returns, given the media type,
// for each attempt answered 200. Only a restartable start can take the bytes
// again after a transfer broke.
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
			// w took bytes of this answer and cannot take them again.
			return &StorageError{Method: http.MethodGet, StatusCode: http.StatusOK, Retryable: true, Message: broke.Error()}
		}
		return transientError{fmt.Errorf("mediagen: download: %w", broke)}
	})
	var se *engine.SendError
	if errors.As(err, &se) { // not once ctx ended: Do returns ctx.Err()
		err = fmt.Errorf("mediagen: download: %w", err)
	}
	return err
}

// transientError is an answer cut short, which a retry may not meet.
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

// redactError drops the URL of a *url.Error, a signed URL's credential.
func redactError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redactURL quotes raw without its query, a signed URL's credential.
func redactURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i] + "?…"
	}
	return fmt.Sprintf("%q", raw)
}
