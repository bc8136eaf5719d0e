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
	"regexp"
	"strings"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/telemetry"
)

// SavedOutput says where [Client.SaveOutput] wrote a generation's output.
type SavedOutput struct {
	Path       string // the asset: the image, video, audio or text
	PosterPath string // a video's poster; "" for other kinds
}

// OpenFunc returns where one output of a done generation goes, for
// [Client.SaveOutputFunc]: name is "output" or "poster". The save writes and
// closes the writer, and an error from Close fails it (so blob storage can
// commit there). A writer the save abandons (its transfer broke or failed)
// sees ctx end before it is closed, so it can abort instead of committing;
// OpenFunc is then called again for the same output: start over.
type OpenFunc func(ctx context.Context, g *mediagen.Generation, name, mediaType string) (io.WriteCloser, error)

// SaveOutput downloads the output of a done generation (others are refused
// with [ErrInvalidArgument]) into dir, created when missing, as <id><ext>
// ("g_123.mp4"; text as .txt) and a video's poster as <id>.poster<ext>; an
// unusual id is cleaned and suffixed with its hash. Files are renamed into
// place when whole, and a broken transfer starts over. Outputs expire 24
// hours after the request. Given [WithIdempotencyKey], the journal records
// the save ([Client.Unfinished] no longer lists it).
func (c *Client) SaveOutput(ctx context.Context, g *mediagen.Generation, dir string, opts ...Option) (*SavedOutput, error) {
	saved := &SavedOutput{}
	mkdir := func() error { return os.MkdirAll(cmp.Or(dir, "."), 0o755) }
	err := c.save(ctx, g, opts, mkdir, func(_ context.Context, g *mediagen.Generation, name, mediaType string) (io.WriteCloser, error) {
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

// SaveOutputFunc is [Client.SaveOutput] to the writers open returns (blob
// storage, a database), with the same checks, retries and journal record;
// a text output is written as "output" of type text/plain.
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

// abortable is an OpenFunc's writer and the end of the context it got.
type abortable struct {
	io.WriteCloser
	cancel context.CancelFunc
}

func (a *abortable) Close() error {
	defer a.cancel()
	return a.WriteCloser.Close()
}

// save checks g, prepares the destination, writes each output through open
// and records the save for a keyed call.
func (c *Client) save(ctx context.Context, g *mediagen.Generation, opts []Option, prepare func() error, open OpenFunc) (err error) {
	if g == nil {
		return fmt.Errorf("%w: SaveOutput needs a done generation, got nil", ErrInvalidArgument)
	}
	if g.Status != mediagen.GenerationStatusDone {
		return fmt.Errorf("%w: SaveOutput needs a done generation, got %s", ErrInvalidArgument, g.Status)
	}
	if g.ID == "" {
		return fmt.Errorf("%w: SaveOutput needs a generation id to name its files", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return err
	}
	ctx, span := c.tel.StartSave(ctx, g.ID)
	err = telemetry.ErrPanicked // until it returns: open may panic
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

// saveOne downloads one output, to a new writer of open per attempt
// answered; a broken attempt's writer is dropped, the last closed once the
// transfer is whole. A mediaType of "" is the answer's.
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
// sees its context end first, so one that commits on Close aborts.
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

// partFile is a temporary file renamed to final when closed, so final is
// never partial; path is then set to final.
type partFile struct {
	*os.File
	final string
	path  *string
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

// createPart creates a temporary file beside base, with mode 0666 (not
// os.CreateTemp's 0600) so the umask decides, as with os.Create.
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

// extensions names the files of the service's media types; others go
// through the system's table.
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

// hashedEnd matches the end of safeName's hashed names.
var hashedEnd = regexp.MustCompile(`-[0-9a-f]{16}$`)

// safeName is the file name of the generation id: id itself when it is
// lower-case letters, digits, '-' and '_' only (as the service's ids are),
// else id lowered, other characters as '_', cut to maxKept, plus '-' and 16
// hex digits of its SHA-256. Distinct ids get distinct names even where case
// is ignored, and no name has a separator or a dot ('.poster' is ours).
func safeName(id string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '_'
	}, id)
	if name == id && name != "" && len(name) <= maxKept && !hashedEnd.MatchString(name) {
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
