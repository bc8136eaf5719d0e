package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/engine"
)

// CreateUploadURL reserves a signed upload of exactly size bytes of
// contentType: step 1 of the two-step upload (the upload package does all
// steps): PUT the bytes to its UploadURL, without the API key, before it
// expires. Reserving charges nothing, so it is retried like a read.
func (c *Client) CreateUploadURL(ctx context.Context, size int64, contentType string, opts ...Option) (*mediagen.UploadURL, error) {
	if size < 0 || contentType == "" {
		return nil, fmt.Errorf("%w: CreateUploadURL needs a size >= 0 and a content type", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	// A reservation charges nothing: it is Safe to send again.
	r, err := fromGenerated(api.NewCreateUploadURLRequest(c.server, api.CreateUploadURLRequest{Bytes: size, ContentType: contentType}))
	if err != nil {
		return nil, err
	}
	var u mediagen.UploadURL
	if _, err := c.do(ctx, cfg, r, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

// UploadMultipart sends a multipart/form-data body of files (each part under
// the field name "files"; contentType carries the boundary) to the
// multipart upload route and returns the files in submission order, with
// their OriginalName and Size. The body is streamed, not buffered, and so
// sent once: never retried. Each attempt is bounded by the transfer
// timeout ([WithTransferTimeout]). Package upload builds such bodies from
// files and readers, checking sizes and types first.
func (c *Client) UploadMultipart(ctx context.Context, contentType string, body io.Reader, opts ...Option) ([]mediagen.File, error) {
	if body == nil || !strings.HasPrefix(contentType, "multipart/form-data") {
		return nil, fmt.Errorf("%w: UploadMultipart needs a multipart/form-data body", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	// The body streams: sent once, bounded as a transfer.
	r := c.request(http.MethodPost, "/v3/files/upload", "", "", engine.Once)
	r.Header = http.Header{"Content-Type": {contentType}}
	r.Transfer = true
	r.Open = func() (io.ReadCloser, int64, error) { return io.NopCloser(body), -1, nil }
	var list api.FileList
	if _, err := c.do(ctx, cfg, &r, &list); err != nil {
		return nil, err
	}
	return list.Files, nil
}
