package client

import (
	"context"
	"io"
)

// UploadFilesForTest exposes the multipart route, which package upload
// reaches through internal/link, to the external tests.
func UploadFilesForTest(c *Client, ctx context.Context, contentType string, body io.Reader) ([]File, error) {
	return c.uploadFiles(ctx, contentType, body)
}
