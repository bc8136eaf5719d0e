package upload

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mediagen/mediagen-go/client"
)

// Option configures one upload: [File], [Reader] or [Multipart]. An option
// given a bad value makes the upload fail before anything is read or sent,
// with an error naming it; a nil Option is skipped. Options of package
// client reach the upload's requests through [WithClientOptions].
type Option func(*settings) error

// WithProgress calls fn as bytes go out, with the bytes sent so far and the
// total (for [Multipart], of all the parts' contents). fn runs on the
// goroutine that writes the request body, so it must return quickly. sent
// never goes back: when a PUT is retried from the start of the source, fn
// is called again only once the new attempt passes the count already
// reported. A successful upload's last call reports total, and fn is not
// called after the upload returns.
func WithProgress(fn func(sent, total int64)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("upload.WithProgress: needs a non-nil function")
		}
		s.progress = fn
		return nil
	}
}

// WithContentType sets the media type of a [File] or [Reader] upload
// instead of detecting it from the content; [Multipart] refuses it. It must
// be one of [AcceptedTypes] (aliases such as audio/x-wav are accepted). For
// [Reader], a non-empty contentType argument takes precedence.
func WithContentType(contentType string) Option {
	return func(s *settings) error {
		if _, err := canonicalType(contentType); err != nil {
			return fmt.Errorf("upload.WithContentType: %w", err)
		}
		s.contentType = contentType
		return nil
	}
}

// WithClientOptions applies opts (a timeout, middleware, a retry policy, a
// logger...) to the upload's requests, on top of the client's: the
// reservation and the storage PUT of [File] and [Reader], the request of
// [Multipart]. Several add up, in order. A client option that cannot apply
// to a call ([client.WithBaseURL], a negative timeout...) makes the upload
// fail before anything is read or sent, as a bad upload option does.
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
	clientOpts  []client.Option // for the upload's requests; shared, clipped on append
}

// newSettings reads opts; a bad option fails the upload before anything is
// read or sent.
func newSettings(c *client.Client, opts []Option) (*settings, error) {
	if c == nil {
		return nil, errors.New("upload: nil client")
	}
	s := &settings{}
	var errs []error
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(s); err != nil {
			errs = append(errs, err)
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
