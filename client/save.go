package client

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"mime"
	"os"
	"path/filepath"
	"strings"

	"github.com/mediagen/mediagen-go"
)

// SavedOutput says where [Client.SaveOutput] wrote a generation's output.
type SavedOutput struct {
	Path       string // the asset: the image, video, audio or text
	PosterPath string // a video's poster; "" for other kinds
}

// OpenFunc returns where one output of a done generation goes, for
// [Client.SaveOutputFunc]: name is "output" or "poster", mediaType the
// output's media type. The save writes the bytes and closes the writer; an
// error from Close fails the save (so an upload to blob storage can commit
// there). A writer the save abandons (its transfer broke midway, or failed)
// sees ctx end before it is closed, as blob storage writers abort then
// instead of committing a partial object. OpenFunc is called again for the
// same output when a transfer broke midway, after the writer of the broken
// one was closed: start over.
type OpenFunc func(ctx context.Context, g *mediagen.Generation, name, mediaType string) (io.WriteCloser, error)

// SaveOutput downloads the output of a done generation into dir (created
// when missing; "" is the current directory) as <id><ext>, the extension
// from its media type ("g_123.mp4"), and a video's poster as
// <id>.poster<ext>; an id that is not lower-case letters, digits, '-' and
// '_' only is cleaned and suffixed with a hash of itself, so distinct ids
// never share a file. Text outputs are written as <id>.txt. Each file is written under a temporary name and
// renamed when complete, so a path it returns is never a partial file, and
// a transfer that breaks midway is retried from the start. Outputs expire
// with the generation, 24 hours after its request: save what you keep. A
// generation not done yet is refused with [ErrInvalidArgument]. Given
// [WithIdempotencyKey], the journal records the save ([Client.Unfinished]
// no longer lists it).
func (c *Client) SaveOutput(ctx context.Context, g *mediagen.Generation, dir string, opts ...Option) (*SavedOutput, error) {
	saved := &SavedOutput{}
	err := c.save(ctx, g, opts, func() error { return os.MkdirAll(cmp.Or(dir, "."), 0o755) }, func(_ context.Context, g *mediagen.Generation, name, mediaType string) (io.WriteCloser, error) {
		final, path := filepath.Join(dir, safeName(g.ID)), &saved.Path
		if name == "poster" {
			final, path = final+".poster", &saved.PosterPath
		}
		final += extension(mediaType)
		f, err := createPart(final)
		if err != nil {
			return nil, fmt.Errorf("mediagen: SaveOutput: %w", err)
		}
		return &partFile{File: f, final: final, path: path}, nil
	})
	if err != nil {
		return nil, err
	}
	return saved, nil
}

// SaveOutputFunc is [Client.SaveOutput] to the writers open returns: to
// blob storage, a database or anywhere else, with the SDK you choose. It
// makes the same checks, retries the same way and records the save in the
// journal the same way; a text output is written too, as "output" of type
// text/plain.
func (c *Client) SaveOutputFunc(ctx context.Context, g *mediagen.Generation, open OpenFunc, opts ...Option) error {
	if open == nil {
		return fmt.Errorf("%w: SaveOutputFunc needs a non-nil OpenFunc", ErrInvalidArgument)
	}
	return c.save(ctx, g, opts, func() error { return nil }, func(ctx context.Context, g *mediagen.Generation, name, mediaType string) (io.WriteCloser, error) {
		wctx, cancel := context.WithCancel(ctx)
		w, err := open(wctx, g, name, mediaType)
		if w == nil && err == nil {
			err = fmt.Errorf("%w: SaveOutputFunc: the OpenFunc returned no writer and no error", ErrInvalidArgument)
		}
		if err != nil {
			cancel()
			if w != nil {
				_ = w.Close()
			}
			return nil, err
		}
		return &abortable{WriteCloser: w, cancel: cancel}, nil
	})
}

// abortable is a writer of an OpenFunc with the context it was opened
// with, which ends before the writer is closed when the save abandons it.
type abortable struct {
	io.WriteCloser
	cancel context.CancelFunc
}

func (a *abortable) Close() error {
	defer a.cancel()
	return a.WriteCloser.Close()
}

// save is the one save: it checks g, prepares the destination, writes each
// output through open and records the save for a keyed call.
func (c *Client) save(ctx context.Context, g *mediagen.Generation, opts []Option, prepare func() error, open OpenFunc) (err error) {
	if g == nil || g.Status != mediagen.GenerationStatusDone {
		status := "nil"
		if g != nil {
			status = string(g.Status)
		}
		return fmt.Errorf("%w: SaveOutput needs a done generation, got %s", ErrInvalidArgument, status)
	}
	if g.ID == "" {
		return fmt.Errorf("%w: SaveOutput needs a generation id to name its files", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return err
	}
	ctx, span := c.tel.StartSave(ctx, g.ID)
	defer func() { span.EndSave(err) }()
	if err := prepare(); err != nil {
		return fmt.Errorf("mediagen: SaveOutput: %w", err)
	}
	out := g.Output
	if out.URL() == "" {
		if g.Kind != mediagen.KindText && out.Text == "" {
			return fmt.Errorf("mediagen: generation %s is done but its output has no URL", g.ID)
		}
		w, err := open(ctx, g, "output", "text/plain")
		if err != nil {
			return err
		}
		if _, err := io.WriteString(w, out.Text); err != nil {
			drop(w)
			return err
		}
		if err := w.Close(); err != nil {
			return err
		}
		return c.markSaved(ctx, cfg)
	}
	if err := c.saveOne(ctx, cfg, g, "output", out.MIME, out.URL(), open); err != nil {
		return err
	}
	if out.Poster != "" {
		if err := c.saveOne(ctx, cfg, g, "poster", "", out.Poster, open); err != nil {
			return err
		}
	}
	return c.markSaved(ctx, cfg)
}

// saveOne downloads one output to the writers open returns: each attempt
// answered gets a new one, the writer of a broken attempt dropped, and the
// last is closed once the transfer is whole. A mediaType of "" is the
// answer's.
func (c *Client) saveOne(ctx context.Context, cfg *config, g *mediagen.Generation, name, mediaType, rawURL string, open OpenFunc) error {
	var w io.WriteCloser
	err := c.download(ctx, cfg, rawURL, func(answered string) (io.Writer, error) {
		if w != nil {
			drop(w)
		}
		if mediaType == "" {
			mediaType = answered
		}
		var err error
		w, err = open(ctx, g, name, mediaType)
		return w, err
	}, true)
	switch {
	case err != nil && w != nil:
		drop(w)
	case err == nil:
		err = w.Close()
	}
	return err
}

// drop abandons a writer: a partial file is removed; an OpenFunc's writer
// sees its context end, so that one which commits on Close (blob storage)
// aborts, and is then closed, as it has no other way to end.
func drop(w io.WriteCloser) {
	switch w := w.(type) {
	case *partFile:
		_ = w.File.Close()
		_ = os.Remove(w.Name())
	case *abortable:
		w.cancel()
		_ = w.WriteCloser.Close()
	default:
		_ = w.Close()
	}
}

// partFile is a file written under a temporary name beside final and
// renamed to it when closed, so final is never partial.
type partFile struct {
	*os.File
	final string
	path  *string // set to final once it is there
}

func (p *partFile) Close() error {
	err := p.File.Close()
	if err == nil {
		err = os.Rename(p.Name(), p.final)
	}
	if err != nil {
		_ = os.Remove(p.Name())
		return fmt.Errorf("mediagen: SaveOutput: %w", err)
	}
	*p.path = p.final
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
