package client

import (
	"context"
	"io"

	"github.com/mediagen/mediagen-go"
)

// UploadFilesForTest exposes the multipart route, which package upload
// reaches through internal/link, to the external tests.
func UploadFilesForTest(c *Client, ctx context.Context, contentType string, body io.Reader) ([]mediagen.File, error) {
	return c.uploadFiles(ctx, contentType, body)
}
