package client_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

func TestUploadFiles(t *testing.T) {
	_, c, ctx := setup(t)
	png := media.PNG(32, 32, "a")
	ct, body := multipartBody(t,
		part{"a.png", "image/png", png},
		part{"notes.txt", "text/plain", []byte("hello")},
	)
	// Read through a plain io.Reader: the client must stream, not need a
	// buffer it can replay.
	files, err := c.UploadMultipart(ctx, ct, io.MultiReader(body))
	require.NoError(t, err)
	require.Len(t, files, 2)
	assert.Equal(t, "a.png", files[0].OriginalName)
	assert.EqualValues(t, len(png), files[0].Size)
	assert.Equal(t, "notes.txt", files[1].OriginalName)

	g, err := c.CreateGeneration(ctx, client.ProductShotArgs{Image: files[0].ID, Prompt: "on marble"})
	require.NoError(t, err)
	assert.Equal(t, files[0].ID, g.Params["image"])

	parts := make([]part, 11)
	for i := range parts {
		parts[i] = part{"f.png", "image/png", png}
	}
	ct, body = multipartBody(t, parts...)
	_, err = c.UploadMultipart(ctx, ct, body)
	assert.ErrorIs(t, err, client.ErrInvalidArgument, "more than 10 files")
}

func TestSignedUpload(t *testing.T) {
	_, c, ctx := setup(t)
	png := media.PNG(40, 30, "signed")
	u, err := c.CreateUploadURL(ctx, int64(len(png)), "image/png")
	require.NoError(t, err)
	assert.Equal(t, "PUT", string(u.Method))
	assert.Equal(t, int64(len(png)), u.Headers.ContentLength)
	assert.Equal(t, "image/png", u.Headers.ContentType)
	assert.Positive(t, u.ExpiresIn)

	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.UploadURL, bytes.NewReader(png))
	require.NoError(t, err)
	req.Header.Set("Content-Type", u.Headers.ContentType)
	req.ContentLength = int64(len(png))
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	g, err := c.CreateGeneration(ctx, client.AdArgs{Image: u.File.ID, Prompt: "summer sale"})
	require.NoError(t, err)
	assert.Equal(t, mediagen.GenerationStatusPending, g.Status)

	_, err = c.CreateUploadURL(ctx, 31_457_281, "image/png")
	var apiErr *client.APIError
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusRequestEntityTooLarge, apiErr.StatusCode)
	assert.ErrorIs(t, err, client.ErrInvalidArgument, "an argument the service refused")
	_, err = c.CreateUploadURL(ctx, 10, "application/x-msdownload")
	require.ErrorAs(t, err, &apiErr)
	assert.Equal(t, http.StatusUnsupportedMediaType, apiErr.StatusCode)
	assert.ErrorIs(t, err, client.ErrInvalidArgument, "an argument the service refused")
	_, err = c.CreateUploadURL(ctx, -1, "image/png")
	assert.ErrorIs(t, err, client.ErrInvalidArgument)
}
