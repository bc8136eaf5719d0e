package upload

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/mediagen/mediagen-go/internal/mediatype"
)

// source hands out the bytes to upload, once per attempt.
type source struct {
	size       int64
	open       func() (io.Reader, error) // at the first byte; once unless rereadable
	rereadable bool
	peek       func() ([]byte, error) // the head, for detection; open replays it
	strict     bool                   // bytes beyond size are an error
}

// newSource reads an io.ReaderAt in sections from its offset, rewinds an
// io.Seeker, and reads anything else once.
func newSource(r io.Reader, size int64) *source {
	s := &source{size: size, strict: true, rereadable: true}
	seeker, isSeeker := r.(io.Seeker)
	ra, isReaderAt := r.(io.ReaderAt)
	var start int64
	if isSeeker {
		off, err := seeker.Seek(0, io.SeekCurrent)
		// A pipe (os.Stdin) is an *os.File that can neither seek nor ReadAt.
		start, isSeeker, isReaderAt = off, err == nil, isReaderAt && err == nil
	}
	switch {
	case isReaderAt:
		s.strict = false
		s.open = func() (io.Reader, error) { return io.NewSectionReader(ra, start, size), nil }
	case isSeeker:
		s.open = func() (io.Reader, error) {
			if _, err := seeker.Seek(start, io.SeekStart); err != nil {
				return nil, fmt.Errorf("upload: rewinding the reader: %w", err)
			}
			return r, nil
		}
	default:
		s.rereadable = false
		var head []byte
		var once sync.Once
		var headErr error
		s.peek = func() ([]byte, error) {
			once.Do(func() { head, headErr = readHead(r, size) })
			return head, headErr
		}
		s.open = func() (io.Reader, error) { return io.MultiReader(bytes.NewReader(head), r), nil }
		return s
	}
	s.peek = func() ([]byte, error) {
		r, err := s.open()
		if err != nil {
			return nil, err
		}
		return readHead(r, size)
	}
	return s
}

// readHead reads the first bytes of content of size bytes, for detection.
func readHead(r io.Reader, size int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, min(size, mediatype.SniffLen)))
	if err != nil {
		return nil, fmt.Errorf("upload: reading the start of the content: %w", err)
	}
	return b, nil
}

// exactReader passes exactly size bytes, or fails with ErrSizeMismatch. It
// checks for more before passing the last bytes, so a too long source never
// yields a complete body.
type exactReader struct {
	r       io.Reader
	size, n int64
	strict  bool
}

func (e *exactReader) Read(p []byte) (int, error) {
	if e.n >= e.size {
		return 0, io.EOF
	}
	if rem := e.size - e.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := e.r.Read(p)
	e.n += int64(n)
	switch {
	case errors.Is(err, io.EOF) && e.n < e.size:
		return n, fmt.Errorf("%w: the source ended after %d of %d bytes", ErrSizeMismatch, e.n, e.size)
	case err != nil && !errors.Is(err, io.EOF):
		return n, err
	case e.n == e.size && e.strict:
		if err := e.checkExtra(); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func (e *exactReader) checkExtra() error {
	var b [1]byte
	n, err := io.ReadFull(e.r, b[:])
	if n > 0 {
		return fmt.Errorf("%w: the source has more than %d bytes", ErrSizeMismatch, e.size)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
