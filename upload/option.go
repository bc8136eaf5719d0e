package upload

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mediagen/mediagen-go/client"
)

// Option configures one upload: [File], [Reader] or [Multipart]. A bad
// option fails the upload before anything is read or sent; a nil Option is
// skipped.
type Option func(*settings) error

// WithProgress calls fn, on the goroutine writing the body, with the bytes
// sent so far and the total (all parts', for [Multipart]). sent never goes
// back when a PUT is retried; a successful upload's last call reports
// total, and none comes after it returns.
func WithProgress(fn func(sent, total int64)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("upload.WithProgress: needs a non-nil function")
		}
		s.progress = fn
		return nil
	}
}

// WithContentType sets the media type of a [File] or [Reader] upload, one
// of [AcceptedTypes] or an alias, instead of detecting it; [Multipart]
// refuses it, and Reader's contentType argument wins over it.
func WithContentType(contentType string) Option {
	return func(s *settings) error {
		if _, err := canonicalType(contentType); err != nil {
			return fmt.Errorf("upload.WithContentType: %w", err)
		}
		s.contentType = contentType
		return nil
	}
}

// WithClientOptions applies opts to the upload's requests, on top of the
// client's; several add up. One that cannot apply to a call
// ([client.WithBaseURL]...) fails the upload before anything is sent.
func WithClientOptions(opts ...client.Option) Option {
	return func(s *settings) error {
		s.clientOpts = append(slices.Clip(s.clientOpts), opts...)
		return nil
	}
}

// settings is what one upload's options say.
type settings struct {
	progress    func(sent, total int64)
	contentType string
	clientOpts  []client.Option // shared, clipped on append
}

// newSettings reads opts, joining every problem.
func newSettings(c *client.Client, opts []Option) (*settings, error) {
	if c == nil {
		return nil, errors.New("upload: nil client")
	}
	s := &settings{}
	var errs []error
	for _, o := range opts {
		if o != nil {
			errs = append(errs, o(s))
		}
	}
	if err := client.CheckOptions(s.clientOpts...); err != nil {
		errs = append(errs, fmt.Errorf("upload.WithClientOptions: %w", err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}
