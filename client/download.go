package client

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/mediagen/mediagen-go"
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
	_, err = c.download(ctx, cfg, rawURL, w, nil)
	return err
}

// download GETs rawURL into w, retrying transient failures; rewind, when
// not nil, lets a retry start over after bytes went to w. It returns the
// answer's media type.
func (c *Client) download(ctx context.Context, cfg *config, rawURL string, w io.Writer, rewind func() error) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", fmt.Errorf("%w: %s is not a storage URL", ErrInvalidArgument, redactURL(rawURL))
	}
	r := &engine.Request{Method: http.MethodGet, URL: *u, Class: engine.Safe, Storage: true, Transfer: true}
	var contentType string
	var written int64 // by the last attempt
	err = c.eng.Do(ctx, &cfg.call, r, func(resp *http.Response) error {
		if written > 0 {
			if err := rewind(); err != nil {
				return fmt.Errorf("mediagen: download: starting over: %w", err)
			}
			written = 0
		}
		if resp.StatusCode != http.StatusOK {
			return newStorageError(resp, cfg.call.Clock.Now())
		}
		limit := cfg.s.maxDownload
		if resp.ContentLength > limit {
			return fmt.Errorf("mediagen: download: %w", tooLarge("the asset", limit, resp.ContentLength))
		}
		cw := &countingWriter{w: w}
		_, err := io.Copy(cw, &capReader{r: resp.Body, limit: limit, what: "the asset"})
		written = cw.n
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
			contentType = resp.Header.Get("Content-Type")
			return nil
		}
		if written > 0 && rewind == nil {
			// Only a 200's body reaches w: that answer broke midway, and w
			// cannot take its bytes again.
			return &StorageError{Method: http.MethodGet, StatusCode: http.StatusOK, Retryable: true, Message: broke.Error()}
		}
		return transient(fmt.Errorf("mediagen: download: %w", broke))
	})
	var se *engine.SendError
	if errors.As(err, &se) && ctx.Err() == nil {
		err = fmt.Errorf("mediagen: download: %w", err)
	}
	return contentType, err
}

// transientError is a failure the same attempt may not meet again: an
// answer cut short.
type transientError struct{ error }

func (e transientError) Unwrap() error { return e.error }

func (transientError) Transient() bool { return true }

func transient(err error) error { return transientError{err} }

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

// SavedOutput says where [Client.SaveOutput] wrote a generation's output.
type SavedOutput struct {
	Path       string // the asset: the image, video, audio or text
	PosterPath string // a video's poster; "" for other kinds
}

// SaveOutput downloads the output of a done generation into dir (created
// when missing) as <id><ext>, the extension from its media type
// ("g_123.mp4"), and a video's poster as <id>.poster<ext>; an id that is
// not lower-case letters, digits, '-' and '_' only is cleaned and suffixed
// with a hash of itself, so distinct ids never share a file. Text outputs are
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
	if g.ID == "" {
		return nil, fmt.Errorf("%w: SaveOutput needs a generation id to name its files", ErrInvalidArgument)
	}
	name := safeName(g.ID)
	cfg, err := c.configure(opts)
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
		return saved, c.markSaved(ctx, cfg)
	}
	if saved.Path, err = c.saveURL(ctx, cfg, out.URL(), filepath.Join(dir, name), out.MIME); err != nil {
		return nil, err
	}
	if out.Poster != "" {
		if saved.PosterPath, err = c.saveURL(ctx, cfg, out.Poster, filepath.Join(dir, name+".poster"), ""); err != nil {
			return nil, err
		}
	}
	return saved, c.markSaved(ctx, cfg)
}

// saveURL downloads rawURL to base plus the extension of its media type:
// mediaType when given, else the answer's Content-Type.
func (c *Client) saveURL(ctx context.Context, cfg *config, rawURL, base, mediaType string) (string, error) {
	var path string
	err := writeAtomic(base, func(f *os.File) (string, error) {
		ct, err := c.download(ctx, cfg, rawURL, f, func() error {
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
	f, err := createPart(base)
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

// createPart creates a new temporary file beside base. Unlike
// os.CreateTemp (0600) it asks for 0666, so the saved file gets the
// permissions the umask gives any new file, as with os.Create.
func createPart(base string) (*os.File, error) {
	for range 100 {
		name := fmt.Sprintf("%s.%08x.part", filepath.Join(filepath.Dir(base), "."+filepath.Base(base)), rand.Uint32())
		f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, fmt.Errorf("cannot create a temporary file beside %s", base)
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

// maxKept is the most characters of an id a file name keeps.
const maxKept = 100

// safeName is the name, before the extension, that the outputs of the
// generation id are saved under. It is id itself when id is lower-case
// letters, digits, '-' and '_' only (as the service's ids are); otherwise
// id with capitals lowered and other characters replaced by '_', cut to
// maxKept, then '-' and 16 hex digits of the SHA-256 of id.
//
// Distinct ids get distinct names, also where file names ignore case: a
// name kept as is never ends like a hashed one (such an id is hashed too),
// and hashed names differ by their hash. A name has no separator and no
// dot, so it stays in its folder and ".poster" cannot make it another's.
func safeName(id string) string {
	var b strings.Builder
	changed := false
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r - 'A' + 'a')
			changed = true
		default:
			b.WriteByte('_')
			changed = true
		}
	}
	name := b.String()
	if !changed && name != "" && len(name) <= maxKept && !endsHashed(name) {
		return name
	}
	if len(name) > maxKept {
		name = name[:maxKept]
	}
	if name == "" {
		name = "_" // not "-<hash>": a leading '-' reads as an option in a shell
	}
	sum := sha256.Sum256([]byte(id))
	return name + "-" + hex.EncodeToString(sum[:8])
}

// endsHashed reports whether name ends as safeName's hashed names do.
func endsHashed(name string) bool {
	const n = 16
	if len(name) < n+1 || name[len(name)-n-1] != '-' {
		return false
	}
	for _, c := range name[len(name)-n:] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
