package upload

import (
	"errors"
	"fmt"

	"github.com/mediagen/mediagen-go/client"
)

// An upload takes [client.Option] values: the options of this package, and
// any of package client (a timeout, middleware, a retry policy, a logger),
// which apply to the upload's requests on top of the client's: the
// reservation and the storage PUT of [File] and [Reader], the request of
// [Multipart].

var (
	progressKey    = client.NewKey("upload.WithProgress", notNil)
	contentTypeKey = client.NewKey("upload.WithContentType", func(ct string) error {
		_, err := canonicalType(ct)
		return err
	})
)

func notNil(fn func(sent, total int64)) error {
	if fn == nil {
		return errors.New("needs a non-nil function")
	}
	return nil
}

// WithProgress calls fn as bytes go out, with the bytes sent so far and the
// total (for [Multipart], of all the parts' contents). fn runs on the
// goroutine that writes the request body, so it must return quickly. sent
// never goes back: when a PUT is retried from the start of the source, fn
// is called again only once the new attempt passes the count already
// reported. A successful upload's last call reports total, and fn is not
// called after the upload returns.
func WithProgress(fn func(sent, total int64)) client.Option { return progressKey.Option(fn) }

// WithContentType sets the media type of a [File] or [Reader] upload
// instead of detecting it from the content; [Multipart] refuses it. It must
// be one of [AcceptedTypes] (aliases such as audio/x-wav are accepted). For
// [Reader], a non-empty contentType argument takes precedence.
func WithContentType(contentType string) client.Option { return contentTypeKey.Option(contentType) }

// settings is what one upload's options say.
type settings struct {
	progress    func(sent, total int64)
	contentType string
	opts        []client.Option // every option, for the client calls
}

// newSettings reads opts; a bad option fails the upload before anything is
// read or sent.
func newSettings(c *client.Client, opts []client.Option) (*settings, error) {
	if c == nil {
		return nil, errors.New("upload: nil client")
	}
	s := &settings{opts: opts}
	var err error
	if s.progress, _, err = progressKey.Get(opts); err != nil {
		return nil, fmt.Errorf("upload: %w", err)
	}
	s.contentType, _, _ = contentTypeKey.Get(opts) // every option was checked above
	return s, nil
}
