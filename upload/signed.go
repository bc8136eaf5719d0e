package upload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// File uploads the file at path with the two-step signed upload and returns
// its id once storage has answered 200. The media type comes from
// [WithContentType] or is detected from the file's first bytes (the name only
// tells Markdown and CSV apart from plain text). The file is streamed,
// never held in memory, and a transient PUT failure is retried from the
// start of the file.
//
// Size and type are checked before anything is sent; see the package errors.
// The returned File carries Size; OriginalName is empty because the signed
// route does not record names.
func File(ctx context.Context, c *client.Client, path string, opts ...Option) (*mediagen.File, error) {
	s, err := newSettings(c, opts)
	if err != nil {
		return nil, err
	}
	f, info, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if err := checkSize(path, info.Size()); err != nil {
		return nil, err
	}
	src, err := newSource(io.NewSectionReader(f, 0, info.Size()), info.Size())
	if err != nil {
		return nil, err
	}
	ct, err := resolveType(src, s.contentType, info.Name())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	file, err := signedUpload(ctx, c, src, ct, s)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return file, err
}

// Reader uploads exactly size bytes from r with the two-step signed upload
// and returns the file id once storage has answered 200. contentType "" means
// detect it from the first 512 bytes, which are peeked without being lost.
//
// The bytes are streamed. A transient PUT failure, or a signed URL that has
// expired, is retried only when r can be read again: an io.ReaderAt is read
// from the reader's current offset if it is also an io.Seeker (else from 0)
// without moving it; an io.Seeker alone is rewound to where it was. A plain
// io.Reader is read once. A source with fewer bytes than size, or (when it
// is not an io.ReaderAt) more, fails with [ErrSizeMismatch] and nothing is
// stored. r is not read, and progress not reported, after Reader returns;
// for that, when ctx ends while a Read of r is in progress, Reader returns
// once that Read does, so a reader that can block (a network stream) should
// itself give up in time.
func Reader(ctx context.Context, c *client.Client, r io.Reader, size int64, contentType string, opts ...Option) (*mediagen.File, error) {
	s, err := newSettings(c, opts)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New("upload: nil reader")
	}
	if err := checkSize("reader", size); err != nil {
		return nil, err
	}
	src, err := newSource(r, size)
	if err != nil {
		return nil, err
	}
	if contentType == "" {
		contentType = s.contentType
	}
	ct, err := resolveType(src, contentType, "")
	if err != nil {
		return nil, err
	}
	return signedUpload(ctx, c, src, ct, s)
}

// openFile opens the regular file at path; it is checked first, as opening
// a named pipe would block.
func openFile(path string) (*os.File, os.FileInfo, error) {
	info, err := os.Stat(path)
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	var f *os.File
	if err == nil {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("upload: %w", err)
	}
	return f, info, nil
}

// checkSize refuses an empty or oversized file before anything is sent.
func checkSize(name string, size int64) error {
	switch {
	case size <= 0:
		return fmt.Errorf("%w: %s has %d bytes", ErrEmpty, name, size)
	case size > MaxFileSize:
		return fmt.Errorf("%w: %s has %d bytes", ErrTooLarge, name, size)
	}
	return nil
}

// resolveType returns the canonical accepted type: the declared one, or the
// one detected from the content.
func resolveType(src *source, declared, name string) (string, error) {
	if declared != "" {
		return canonicalType(declared)
	}
	head, err := src.peek()
	if err != nil {
		return "", err
	}
	detected := detectType(head, src.size, name)
	ct, err := canonicalType(detected)
	if err != nil {
		return "", fmt.Errorf("detected from content: %w", err)
	}
	return ct, nil
}

// signedUpload reserves an id and PUTs the bytes. The client retries
// transient PUT failures while the source can be read again; a refused URL
// (it expired) gets a fresh reservation, up to maxReservations in all.
func signedUpload(ctx context.Context, c *client.Client, src *source, contentType string, s *settings) (*mediagen.File, error) {
	prog := &progress{fn: s.progress, total: src.size}
	for reservations := 1; ; reservations++ {
		u, err := c.CreateUploadURL(ctx, src.size, contentType, s.clientOpts...)
		if err != nil {
			return nil, fmt.Errorf("upload: reserving an upload URL: %w", err)
		}
		if got := u.Headers.ContentLength; got != src.size {
			return nil, fmt.Errorf("upload: the service signed Content-Length %d for %d bytes", got, src.size)
		}
		err = c.PutUpload(ctx, u, newBody(src, prog), s.clientOpts...)
		switch {
		case err == nil:
			return &mediagen.File{ID: u.File.ID, Size: src.size}, nil
		case !errors.Is(err, client.ErrExpired) || !src.rereadable:
			return nil, err
		case reservations >= maxReservations:
			return nil, fmt.Errorf("upload: giving up after %d reservations: %w", reservations, err)
		}
	}
}
