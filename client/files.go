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
// contentType, step 1 of the two-step upload (package upload does every
// step): PUT the bytes to its UploadURL ([Client.PutUpload]) before it
// expires. Reserving charges nothing, so it is retried like a read.
func (c *Client) CreateUploadURL(ctx context.Context, size int64, contentType string, opts ...Option) (*mediagen.UploadURL, error) {
	if size < 0 || contentType == "" {
		return nil, fmt.Errorf("%w: CreateUploadURL needs a size >= 0 and a content type", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	body := api.CreateUploadURLRequest{Bytes: size, ContentType: contentType}
	u, _, err := send[mediagen.UploadURL](ctx, c, cfg, api.NewCreateUploadURLRequest, body)
	return u, err
}

// UploadMultipart sends a multipart/form-data body of files (each part
// named "files"; contentType carries the boundary) and returns the files in
// order, with their OriginalName and Size. The body streams, so it is sent
// once, never retried, bounded by [WithTransferTimeout]. Package upload
// builds such bodies, checking sizes and types first.
func (c *Client) UploadMultipart(ctx context.Context, contentType string, body io.Reader, opts ...Option) ([]mediagen.File, error) {
	if body == nil || !strings.HasPrefix(contentType, "multipart/form-data") {
		return nil, fmt.Errorf("%w: UploadMultipart needs a multipart/form-data body", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
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
