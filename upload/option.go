package upload

import (
	"errors"
	"fmt"

	"github.com/mediagen/mediagen-go/client"
)

// Option configures [File], [Reader] and [Multipart].
type Option func(*settings) error

// settings is what the options configure.
type settings struct {
	progress    func(sent, total int64)
	contentType string
	clientOpts  []client.Option
}

// WithClientOptions applies client options (a timeout, middleware, a retry
// policy, a logger) to the requests of an upload, on top of the client's:
// the reservation and the storage PUT of [File] and [Reader], the request
// of [Multipart]. Storage PUTs retry under the client's [client.RetryPolicy].
func WithClientOptions(opts ...client.Option) Option {
	return func(s *settings) error {
		s.clientOpts = append(s.clientOpts, opts...)
		return nil
	}
}

// WithProgress calls fn as bytes go out, with the bytes sent so far and the
// total (for [Multipart], of all the parts' contents). fn runs on the goroutine that writes the request body,
// so it must return quickly. sent never goes back: when a PUT is retried
// from the start of the source, fn is called again only once the new
// attempt passes the count already reported. A successful upload's last call
// reports total, and fn is not called after the upload returns.
func WithProgress(fn func(sent, total int64)) Option {
	return func(s *settings) error {
		if fn == nil {
			return errors.New("upload: WithProgress needs a non-nil function")
		}
		s.progress = fn
		return nil
	}
}

// WithContentType sets the media type of a [File] or [Reader] upload
// instead of detecting it from the content; [Multipart] refuses it. It must be one of [AcceptedTypes] (aliases such as
// audio/x-wav are accepted). For [Reader], a non-empty contentType argument
// takes precedence.
func WithContentType(contentType string) Option {
	return func(s *settings) error {
		if _, err := canonicalType(contentType); err != nil {
			return fmt.Errorf("upload: WithContentType: %w", err)
		}
		s.contentType = contentType
		return nil
	}
}

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
	return s, errors.Join(errs...)
}
