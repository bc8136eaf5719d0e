package upload

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// File uploads the file at path, streamed, with the signed upload and
// returns its file (no OriginalName: the signed route records none). The
// type is [WithContentType]'s or detected; a failed PUT is retried.
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
	src, ct, err := prepare(path, io.NewSectionReader(f, 0, info.Size()), info.Size(), s.contentType, info.Name())
	if err != nil {
		return nil, err
	}
	file, err := signedUpload(ctx, c, src, ct, s)
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return file, err
}

// Reader uploads exactly size bytes from r, streamed, with the signed
// upload; contentType "" means detect it. A failed PUT is retried only when
// r is an io.ReaderAt (read from its offset, unmoved) or an io.Seeker
// (rewound). Fewer bytes than size, or more (not for an io.ReaderAt), fail
// with [ErrSizeMismatch]. r is not read after Reader returns, which waits
// for a Read under way: a reader that can block should give up in time.
func Reader(ctx context.Context, c *client.Client, r io.Reader, size int64, contentType string, opts ...Option) (*mediagen.File, error) {
	s, err := newSettings(c, opts)
	if err != nil {
		return nil, err
	}
	if r == nil {
		return nil, errors.New("upload: nil reader")
	}
	src, ct, err := prepare("reader", r, size, cmp.Or(contentType, s.contentType), "")
	if err != nil {
		return nil, err
	}
	return signedUpload(ctx, c, src, ct, s)
}

// openFile opens the regular file at path, checked first, as a pipe would block.
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

func checkSize(name string, size int64) error {
	switch {
	case size <= 0:
		return fmt.Errorf("%w: %s has %d bytes", ErrEmpty, name, size)
	case size > MaxFileSize:
		return fmt.Errorf("%w: %s has %d bytes", ErrTooLarge, name, size)
	}
	return nil
}

// prepare checks the size bytes of r, named label in errors, and settles
// their type, declared or detected (name refines plain text).
func prepare(label string, r io.Reader, size int64, declared, name string) (*source, string, error) {
	if err := checkSize(label, size); err != nil {
		return nil, "", err
	}
	src := newSource(r, size)
	ct, err := resolveType(src, declared, name)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", label, err)
	}
	return src, ct, nil
}

// resolveType returns the canonical accepted type, declared or detected.
func resolveType(src *source, declared, name string) (string, error) {
	if declared != "" {
		return canonicalType(declared)
	}
	head, err := src.peek()
	if err != nil {
		return "", err
	}
	ct, err := canonicalType(detectType(head, src.size, name))
	if err != nil {
		return "", fmt.Errorf("detected from content: %w", err)
	}
	return ct, nil
}

// signedUpload reserves an id and PUTs the bytes, reserving again when the
// URL expired.
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
