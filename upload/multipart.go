package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/textproto"
	"os"
	"strconv"
	"sync"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/mediatype"
)

// errRequestEnded stops the body writer once the request is over.
var errRequestEnded = errors.New("upload: multipart request ended")

// Part is one file of a [Multipart] upload.
type Part struct {
	// Name is the file name sent in Content-Disposition and echoed back as
	// the file's OriginalName. Empty means "file-<n>" (n from 1).
	Name string
	// Reader supplies the bytes; it is read once, from its current
	// position, and never closed by Multipart (a Reader from [FilePart]
	// opens and closes its file itself).
	Reader io.Reader
	// Size is the exact number of bytes Reader supplies. It is needed to
	// refuse empty and oversized files before sending; a Reader that ends
	// early, or (when it is not an io.ReaderAt, as for [Reader]) has more
	// bytes, aborts the request with [ErrSizeMismatch].
	Size int64
	// ContentType is the part's media type; empty means detect it from the
	// first bytes of Reader (peeked without being lost).
	ContentType string
}

// FilePart returns a Part for the file at path: its base name, size and a
// media type detected from its content. The file is opened only when
// [Multipart] reads it and closed when that part is done, so unused Parts
// hold no file descriptor.
func FilePart(path string) (Part, error) {
	f, info, err := openFile(path)
	if err != nil {
		return Part{}, err
	}
	head, err := readHead(io.LimitReader(f, mediatype.SniffLen))
	f.Close()
	if err != nil {
		return Part{}, fmt.Errorf("%s: %w", path, err)
	}
	return Part{
		Name:        info.Name(),
		Reader:      &lazyFile{path: path},
		Size:        info.Size(),
		ContentType: detectType(head, info.Size(), info.Name()),
	}, nil
}

// lazyFile opens its file on the first read and closes it at the end of
// the file; after release it reads from the start again, so a Part from
// FilePart can be passed to another Multipart call.
type lazyFile struct {
	path string
	f    *os.File
	done bool
}

func (l *lazyFile) Read(p []byte) (int, error) {
	if l.done {
		return 0, io.EOF
	}
	if l.f == nil {
		f, err := os.Open(l.path)
		if err != nil {
			l.done = true
			return 0, fmt.Errorf("upload: %w", err)
		}
		l.f = f
	}
	n, err := l.f.Read(p)
	if err != nil {
		l.f.Close()
		l.f, l.done = nil, true
	}
	return n, err
}

// release closes the file if it is open and rewinds to the start.
func (l *lazyFile) release() {
	if l.f != nil {
		l.f.Close()
	}
	l.f, l.done = nil, false
}

// Multipart uploads up to [MaxParts] files in one multipart/form-data request
// and returns their ids in the order of parts, each with its OriginalName and
// Size. Counts, sizes and media types are checked before anything is sent.
// The body is streamed through a pipe, so memory does not grow with the
// files; because it cannot be replayed, a failed request is not retried
// (retry the call, with fresh readers). No part is read after Multipart
// returns: when ctx ends during a Read of a part, Multipart returns once
// that Read does.
//
// [WithClientOptions] and [WithProgress] apply (progress counts the parts'
// bytes, all parts together); [WithContentType] is refused: each Part
// carries its own type. The request is a transfer, bounded per attempt by
// [client.WithTransferTimeout].
func Multipart(ctx context.Context, c *client.Client, parts []Part, opts ...Option) ([]*mediagen.File, error) {
	defer releaseParts(parts)
	s, err := newSettings(c, opts)
	if err != nil {
		return nil, err
	}
	if s.contentType != "" {
		return nil, errors.New("upload: WithContentType applies to File and Reader; give each Part its ContentType")
	}
	prepared, err := prepareParts(parts)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, p := range prepared {
		total += p.src.size
	}
	prog := &progress{fn: s.progress, total: total}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	var wg sync.WaitGroup
	var writeErr error
	wg.Go(func() {
		writeErr = writeParts(mw, prepared, prog)
		pw.CloseWithError(writeErr)
	})
	files, err := c.UploadMultipart(ctx, mw.FormDataContentType(), pr, s.clientOpts...)
	// Stop the writer if the client returned before reading everything, and
	// wait for it so no part is read after Multipart returns.
	pr.CloseWithError(errRequestEnded)
	wg.Wait()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var serr *sourceError
		if errors.As(writeErr, &serr) {
			return nil, writeErr // the source failed, which broke the request
		}
		return nil, fmt.Errorf("upload: multipart upload: %w", err)
	}
	if len(files) != len(parts) {
		return nil, fmt.Errorf("upload: the service returned %d files for %d parts", len(files), len(parts))
	}
	out := make([]*mediagen.File, len(files))
	for i := range files {
		out[i] = &files[i]
	}
	return out, nil
}

// preparedPart is a validated Part with its name and type settled and its
// reader ready to stream.
type preparedPart struct {
	name, contentType string
	src               *source
}

// prepareParts checks every part before anything is sent.
func prepareParts(parts []Part) ([]preparedPart, error) {
	switch {
	case len(parts) == 0:
		return nil, ErrNoParts
	case len(parts) > MaxParts:
		return nil, fmt.Errorf("%w: got %d", ErrTooManyParts, len(parts))
	}
	out := make([]preparedPart, len(parts))
	for i, p := range parts {
		name := p.Name
		if name == "" {
			name = "file-" + strconv.Itoa(i+1)
		}
		if p.Reader == nil {
			return nil, fmt.Errorf("upload: part %d (%s) has a nil Reader", i+1, name)
		}
		if err := checkSize(fmt.Sprintf("part %d (%s)", i+1, name), p.Size); err != nil {
			return nil, err
		}
		src, err := newSource(p.Reader, p.Size)
		if err != nil {
			return nil, err
		}
		ct, err := resolveType(src, p.ContentType, name)
		if err != nil {
			return nil, fmt.Errorf("part %d (%s): %w", i+1, name, err)
		}
		out[i] = preparedPart{name: name, contentType: ct, src: src}
	}
	return out, nil
}

// writeParts streams every part into mw and closes it, reporting the
// parts' bytes to prog.
func writeParts(mw *multipart.Writer, parts []preparedPart, prog *progress) error {
	// One reader across the parts, so its count is the parts' bytes so far.
	counted := &progressReader{p: prog}
	for i, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", map[string]string{"name": "files", "filename": p.name}))
		h.Set("Content-Type", p.contentType)
		w, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		r, err := p.src.open()
		if err != nil {
			return &sourceError{part: i + 1, name: p.name, err: err}
		}
		counted.r = &exactReader{r: r, size: p.src.size, strict: p.src.strict}
		src := &readErrors{r: counted}
		if _, err := io.Copy(w, src); err != nil {
			if src.err != nil {
				return &sourceError{part: i + 1, name: p.name, err: src.err}
			}
			return err // the request ended while the part was written
		}
	}
	return mw.Close()
}

// sourceError is the failure of a part's own reader, which is reported
// instead of the request it broke. Writing into the pipe fails too when the
// request ends early (the service answered before reading everything); that
// is not the source's fault, and the service's answer is reported then.
type sourceError struct {
	part int
	name string
	err  error
}

func (e *sourceError) Error() string { return fmt.Sprintf("part %d (%s): %v", e.part, e.name, e.err) }

func (e *sourceError) Unwrap() error { return e.err }

// readErrors remembers the first error other than io.EOF that r returned.
type readErrors struct {
	r   io.Reader
	err error
}

func (e *readErrors) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

// releaseParts closes the files FilePart opened, whatever happened.
func releaseParts(parts []Part) {
	for _, p := range parts {
		if l, ok := p.Reader.(*lazyFile); ok {
			l.release()
		}
	}
}
