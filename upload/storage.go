package upload

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/link"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// maxReservations bounds the reservations of one upload: the first and two
// fresh ones after refusals (an expired signed URL).
const maxReservations = 3

// maxStorageErrMsg caps the storage message kept in an error.
const maxStorageErrMsg = 512

// errBodyClosed is what a late read of an abandoned attempt's body sees.
var errBodyClosed = errors.New("upload: request body read after the attempt ended")

// putOutcome classifies one PUT attempt.
type putOutcome int

const (
	putDone      putOutcome = iota
	putTransient            // connection error, 429, 502, 503, 504: same URL again
	putRefused              // 403: the signed URL no longer holds; reserve again
	putFailed               // anything else: give up
)

// attemptBody is the request body of one PUT attempt. Closing it waits for a
// read in progress and makes later reads fail, so the transport can never
// touch the source once the next attempt rewinds it.
type attemptBody struct {
	mu     sync.Mutex
	r      io.Reader
	closed bool
	err    error // the first read error of the source itself
}

func (b *attemptBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return 0, errBodyClosed
	}
	n, err := b.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *attemptBody) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	return nil
}

func (b *attemptBody) readErr() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.err
}

// put sends one attempt of the storage PUT. It returns the outcome, how long
// storage asked to wait (Retry-After) and the error to report if no retry
// follows. It returns only once the transport can no longer read body, so
// the source may be rewound for another attempt and is never read (nor
// progress reported) after the upload returns.
func put(ctx context.Context, in *link.Client, u *mediagen.UploadURL, body io.Reader, size int64) (putOutcome, time.Duration, error) {
	method := string(u.Method)
	if method == "" {
		method = http.MethodPut
	}
	ab := &attemptBody{r: body}
	defer ab.Close()
	req, err := http.NewRequestWithContext(ctx, method, u.UploadURL, ab)
	if err != nil {
		return putFailed, 0, fmt.Errorf("upload: bad upload URL from the service: %w", err)
	}
	// Exactly the signed headers: Content-Length comes from ContentLength
	// (net/http ignores it in Header), and nothing else is set, least of
	// all Authorization.
	req.ContentLength = size
	req.Header.Set("Content-Type", u.Headers.ContentType)

	resp, err := in.Storage.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return putFailed, 0, ctx.Err()
		}
		if rerr := ab.readErr(); rerr != nil {
			return putFailed, 0, rerr
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL carries the signature
		}
		return putTransient, 0, fmt.Errorf("upload: storage PUT: %w", err)
	}
	defer resp.Body.Close()
	if in.Observe != nil {
		in.Observe(resp)
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxStorageErrMsg))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return putDone, 0, nil
	}
	serr := &client.StorageError{Method: method, StatusCode: resp.StatusCode, Message: storageMessage(msg)}
	switch {
	case retry.TransientStatus(resp.StatusCode):
		d, _ := retry.After(resp, in.Clock.Now())
		return putTransient, d, serr
	case resp.StatusCode == http.StatusForbidden:
		return putRefused, 0, serr
	}
	return putFailed, 0, serr
}

// storageMessage returns the message of a storage error body: the service's
// JSON error message when there is one, else the text itself.
func storageMessage(body []byte) string {
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	return strings.TrimSpace(string(body))
}
