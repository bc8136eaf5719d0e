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
)

// errRequestEnded stops the body writer once the request is over.
var errRequestEnded = errors.New("upload: multipart request ended")

// Part is one file of a [Multipart] upload.
type Part struct {
	// Name is the file's OriginalName; empty means "file-<n>" (n from 1).
	Name string
	// Reader is read once, from its position, and not closed.
	Reader io.Reader
	// Size is the exact number of bytes Reader supplies, as for [Reader].
	Size int64
	// ContentType is the part's media type; empty means detect it.
	ContentType string
}

// FilePart returns a Part for the file at path, with its name, size and
// detected type. The file is open only while [Multipart] reads it.
func FilePart(path string) (Part, error) {
	f, info, err := openFile(path)
	if err != nil {
		return Part{}, err
	}
	head, err := readHead(f, info.Size())
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

// lazyFile opens its file on the first read and closes it at its end;
// after release it reads from the start again, for another Multipart call.
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

// Multipart uploads up to [MaxParts] files in one streamed multipart
// request and returns their files in the order of parts. Being streamed, a
// failed request is not retried, and [client.WithTransferTimeout] bounds
// it. No part is read after it returns (it waits for a Read under way).
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
	// Stop the writer, and wait so no part is read after we return.
	pr.CloseWithError(errRequestEnded)
	wg.Wait()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var serr *sourceError
		if errors.As(writeErr, &serr) {
			return nil, writeErr
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

// preparedPart is a checked Part, ready to stream.
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
		src, ct, err := prepare(fmt.Sprintf("part %d (%s)", i+1, name), p.Reader, p.Size, p.ContentType, name)
		if err != nil {
			return nil, err
		}
		out[i] = preparedPart{name: name, contentType: ct, src: src}
	}
	return out, nil
}

// writeParts streams every part into mw and closes it.
func writeParts(mw *multipart.Writer, parts []preparedPart, prog *progress) error {
	// One counter across the parts.
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
		if _, err := io.Copy(w, &partReader{r: counted, part: i + 1, name: p.name}); err != nil {
			return err // a sourceError, or the request ended
		}
	}
	return mw.Close()
}

// sourceError is the failure of a part's reader, reported instead of the
// request it broke (unlike a write that failed because the request ended).
type sourceError struct {
	part int
	name string
	err  error
}

func (e *sourceError) Error() string { return fmt.Sprintf("part %d (%s): %v", e.part, e.name, e.err) }

func (e *sourceError) Unwrap() error { return e.err }

// partReader makes the errors of a part's reader sourceErrors.
type partReader struct {
	r    io.Reader
	part int
	name string
}

func (p *partReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err != nil && err != io.EOF {
		err = &sourceError{part: p.part, name: p.name, err: err}
	}
	return n, err
}

// releaseParts closes the files of FilePart's parts.
func releaseParts(parts []Part) {
	for _, p := range parts {
		if l, ok := p.Reader.(*lazyFile); ok {
			l.release()
		}
	}
}
