package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go"

	"github.com/mediagen/mediagen-go/internal/link"
	"github.com/mediagen/mediagen-go/internal/retry"
)

// ErrExpired matches a [*StorageError] for a signed URL storage no longer
// honours: an output, poster or preview URL past its expiry. Read the
// generation (or voice, or template) again for fresh URLs; an API-created
// generation itself is gone 24 hours after its request ([ErrNotFound]).
var ErrExpired = errors.New("mediagen: signed URL expired")

// StorageError is an answer of the storage host other than success, to a
// download or a signed upload's PUT, after the retries that could be made.
// It matches [ErrNotFound] for 404 (the asset was removed) and [ErrExpired]
// for a download's 403 (the signed URL expired).
type StorageError struct {
	Method     string // GET or PUT
	StatusCode int
	Message    string // the start of storage's answer
	// Retryable is true when the failure was transient (429 or a 5xx
	// gateway answer, or a broken connection) but the transfer could not be
	// started again: bytes had already gone to the writer, or the upload's
	// source cannot be read twice.
	Retryable bool
}

// Error describes the refusal; it never includes the signed URL.
func (e *StorageError) Error() string {
	msg := fmt.Sprintf("mediagen: storage %s answered %d", e.Method, e.StatusCode)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.StatusCode == http.StatusForbidden {
		msg += " (signed URL refused)"
	}
	if e.Retryable {
		msg += " (transient, but the transfer could not be started again)"
	}
	return msg
}

// Is matches [ErrNotFound] and [ErrExpired].
func (e *StorageError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrExpired:
		return e.StatusCode == http.StatusForbidden && e.Method == http.MethodGet
	}
	return false
}

// maxStorageMessage caps [StorageError.Message].
const maxStorageMessage = 512

// Download writes the asset at rawURL, a signed storage URL from an output,
// poster or preview, to w. The API key is never sent to storage. Transient
// failures (a broken connection, 429, 502, 503, 504) are retried under the
// client's retry policy as long as no byte has reached w; after that they
// return a [*StorageError] with Retryable set, since w cannot take the bytes
// again ([Client.SaveOutput] can). A removed asset answers an error matching
// [ErrNotFound], an expired URL one matching [ErrExpired].
func (c *Client) Download(ctx context.Context, rawURL string, w io.Writer, opts ...Option) error {
	if w == nil {
		return fmt.Errorf("%w: Download needs a writer", ErrInvalidArgument)
	}
	in, err := c.inside(opts)
	if err != nil {
		return err
	}
	_, err = download(ctx, in, rawURL, w, nil)
	return err
}

// download GETs rawURL into w, retrying transient failures; rewind, when
// not nil, lets a retry start over after bytes went to w. It returns the
// answer's media type.
func download(ctx context.Context, in *link.Client, rawURL string, w io.Writer, rewind func() error) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("%w: %s is not a storage URL", ErrInvalidArgument, redactURL(rawURL))
	}
	for attempt := 0; ; attempt++ {
		a := fetch(ctx, in, u, w)
		if a.err == nil {
			return a.contentType, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if !a.transient {
			return "", a.err
		}
		// A Retry-After above the policy's longest wait ends the retries, as
		// it does for API requests: the caller sees it instead of a long
		// silent sleep.
		if attempt >= in.Retry.MaxRetries || (a.written > 0 && rewind == nil) || a.retryAfter > in.Retry.WaitMax {
			if a.written > 0 && rewind == nil {
				// Only a 200's body reaches w: that answer broke midway, and
				// w cannot take its bytes again.
				return "", &StorageError{Method: http.MethodGet, StatusCode: http.StatusOK,
					Message: strings.TrimPrefix(a.err.Error(), "mediagen: download: "), Retryable: true}
			}
			return "", a.err
		}
		if a.written > 0 {
			if err := rewind(); err != nil {
				return "", fmt.Errorf("mediagen: download: starting over: %w", err)
			}
		}
		d := max(retry.Backoff(in.Retry.WaitMin, in.Retry.WaitMax, attempt), a.retryAfter)
		in.Logger.DebugContext(ctx, "mediagen: download failed; retrying", "error", a.err.Error(), "attempt", attempt+2)
		if err := in.Clock.Sleep(ctx, d); err != nil {
			return "", err
		}
	}
}

// attempt is the outcome of one GET of a download.
type attempt struct {
	contentType string
	written     int64         // bytes that reached the writer
	err         error         // nil on success
	transient   bool          // a retry may succeed
	retryAfter  time.Duration // what storage asked to wait
}

// fetch makes one attempt of a download.
func fetch(ctx context.Context, in *link.Client, u *url.URL, w io.Writer) attempt {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return attempt{err: fmt.Errorf("mediagen: download: %w", err)}
	}
	resp, err := in.Storage.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its URL carries the signature
		}
		return attempt{err: fmt.Errorf("mediagen: download: %w", err), transient: retryableTransportError(err)}
	}
	defer resp.Body.Close()
	if in.Observe != nil {
		in.Observe(resp)
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, maxStorageMessage))
		a := attempt{err: &StorageError{Method: http.MethodGet, StatusCode: resp.StatusCode, Message: storageMessage(msg)}}
		if retry.TransientStatus(resp.StatusCode) {
			a.transient = true
			a.retryAfter, _ = retry.After(resp, in.Clock.Now())
		}
		return a
	}
	cw := &countingWriter{w: w}
	if _, err := io.Copy(cw, resp.Body); err != nil {
		if cw.err != nil {
			return attempt{written: cw.n, err: fmt.Errorf("mediagen: download: writing: %w", cw.err)}
		}
		return attempt{written: cw.n, err: fmt.Errorf("mediagen: download: reading the asset: %w", err), transient: true}
	}
	if resp.ContentLength >= 0 && cw.n != resp.ContentLength {
		return attempt{written: cw.n, err: fmt.Errorf("mediagen: download: got %d of %d bytes", cw.n, resp.ContentLength), transient: true}
	}
	return attempt{contentType: resp.Header.Get("Content-Type"), written: cw.n}
}

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

// storageMessage returns the message of a storage error body: the service's
// JSON error message when there is one, else the text itself.
func storageMessage(body []byte) string {
	var eb errorBody
	if json.Unmarshal(body, &eb) == nil && eb.Error.Message != "" {
		return eb.Error.Message
	}
	return strings.TrimSpace(string(body))
}

// redactURL drops the query of a signed URL, which is its credential.
func redactURL(raw string) string {
	if i := strings.IndexAny(raw, "?#"); i >= 0 {
		raw = raw[:i] + "?…"
	}
	return fmt.Sprintf("%q", raw)
}

// SavedOutput says where [Client.SaveOutput] wrote a generation's output.
type SavedOutput struct {
	Path       string // the asset: the image, video, audio or text
	PosterPath string // a video's poster; "" for other kinds
}

// SaveOutput downloads the output of a done generation into dir (created
// when missing) as <id><ext>, the extension from its media type
// ("g_123.mp4"), and a video's poster as <id>.poster<ext>. Text outputs are
// written as <id>.txt. Each file is written under a temporary name and
// renamed when complete, so a path it returns is never a partial file, and
// a transfer that breaks midway is retried from the start. Outputs expire
// with the generation, 24 hours after its request: save what you keep. A
// generation not done yet is refused with [ErrInvalidArgument].
func (c *Client) SaveOutput(ctx context.Context, g *mediagen.Generation, dir string, opts ...Option) (*SavedOutput, error) {
	if g == nil || g.Status != mediagen.GenerationStatusDone {
		status := "nil"
		if g != nil {
			status = string(g.Status)
		}
		return nil, fmt.Errorf("%w: SaveOutput needs a done generation, got %s", ErrInvalidArgument, status)
	}
	name := safeName(g.ID)
	if name == "" {
		return nil, fmt.Errorf("%w: generation id %q cannot name a file", ErrInvalidArgument, g.ID)
	}
	in, err := c.inside(opts)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("mediagen: SaveOutput: %w", err)
	}
	out := g.Output
	saved := &SavedOutput{}
	if out.URL() == "" {
		if g.Kind != mediagen.KindText && out.Text == "" {
			return nil, fmt.Errorf("mediagen: generation %s is done but its output has no URL", g.ID)
		}
		saved.Path = filepath.Join(dir, name+".txt")
		if err := writeAtomic(saved.Path, func(f *os.File) (string, error) {
			_, err := io.WriteString(f, out.Text)
			return "", err
		}); err != nil {
			return nil, err
		}
		return saved, nil
	}
	if saved.Path, err = saveURL(ctx, in, out.URL(), filepath.Join(dir, name), out.MIME); err != nil {
		return nil, err
	}
	if out.Poster != "" {
		if saved.PosterPath, err = saveURL(ctx, in, out.Poster, filepath.Join(dir, name+".poster"), ""); err != nil {
			return nil, err
		}
	}
	return saved, nil
}

// saveURL downloads rawURL to base plus the extension of its media type:
// mediaType when given, else the answer's Content-Type.
func saveURL(ctx context.Context, in *link.Client, rawURL, base, mediaType string) (string, error) {
	var path string
	err := writeAtomic(base, func(f *os.File) (string, error) {
		ct, err := download(ctx, in, rawURL, f, func() error {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return err
			}
			return f.Truncate(0)
		})
		if err != nil {
			return "", err
		}
		if mediaType == "" {
			mediaType = ct
		}
		path = base + extension(mediaType)
		return path, nil
	})
	return path, err
}

// writeAtomic writes a file through fill into a temporary file beside base
// and renames it to the path fill returns ("" for base itself).
func writeAtomic(base string, fill func(*os.File) (string, error)) error {
	f, err := os.CreateTemp(filepath.Dir(base), "."+filepath.Base(base)+".*.part")
	if err != nil {
		return fmt.Errorf("mediagen: SaveOutput: %w", err)
	}
	tmp := f.Name()
	final, err := fill(f)
	if cerr := f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("mediagen: SaveOutput: %w", cerr)
	}
	if err == nil {
		if final == "" {
			final = base
		}
		err = os.Rename(tmp, final)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return nil
}

// extensions names the files of the media types the service produces;
// others go through the system's table.
var extensions = map[string]string{
	"image/png": ".png", "image/jpeg": ".jpg", "image/webp": ".webp", "image/gif": ".gif",
	"video/mp4": ".mp4", "video/webm": ".webm", "video/quicktime": ".mov",
	"audio/wav": ".wav", "audio/x-wav": ".wav", "audio/mpeg": ".mp3", "audio/ogg": ".ogg",
	"audio/flac": ".flac", "audio/mp4": ".m4a", "audio/webm": ".weba",
	"text/plain": ".txt", "application/json": ".json", "application/pdf": ".pdf",
}

func extension(mediaType string) string {
	mt, _, err := mime.ParseMediaType(mediaType)
	if err != nil {
		return ".bin"
	}
	if ext, ok := extensions[strings.ToLower(mt)]; ok {
		return ext
	}
	if exts, _ := mime.ExtensionsByType(mt); len(exts) > 0 {
		return exts[0]
	}
	return ".bin"
}

// safeName keeps the characters of id that are safe in a file name on every
// system, so a hostile id cannot climb out of the folder.
func safeName(id string) string {
	var b strings.Builder
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteRune('_')
		}
	}
	s := strings.Trim(b.String(), ".")
	if len(s) > 128 {
		s = s[:128]
	}
	return s
}
