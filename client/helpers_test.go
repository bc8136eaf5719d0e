package client_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/textproto"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/refserver"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// setup starts a reference server and a client of its default project.
func setup(t *testing.T, opts ...refserver.Option) (*clienttest.Server, *client.Client, context.Context) {
	t.Helper()
	srv := clienttest.NewServer(t, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return srv, srv.Client(), ctx
}

// part is one file of a multipart upload.
type part struct {
	name, contentType string
	data              []byte
}

// multipartBody builds the body of POST /v3/files/upload.
func multipartBody(t testing.TB, parts ...part) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="files"; filename="`+p.name+`"`)
		h.Set("Content-Type", p.contentType)
		pw, err := w.CreatePart(h)
		require.NoError(t, err)
		_, err = pw.Write(p.data)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return w.FormDataContentType(), &buf
}

// uploadPNG uploads a small PNG and returns its file id.
func uploadPNG(t testing.TB, ctx context.Context, c *client.Client) string {
	t.Helper()
	ct, body := multipartBody(t, part{"logo.png", "image/png", media.PNG(64, 48, t.Name())})
	files, err := c.UploadFiles(ctx, ct, body)
	require.NoError(t, err)
	require.Len(t, files, 1)
	return files[0].Id
}

// uploadWAV uploads a speech sample of d and returns its file id.
func uploadWAV(t testing.TB, ctx context.Context, c *client.Client, d time.Duration) string {
	t.Helper()
	ct, body := multipartBody(t, part{"sample.wav", "audio/wav", media.WAV(d, t.Name())})
	files, err := c.UploadFiles(ctx, ct, body)
	require.NoError(t, err)
	require.Len(t, files, 1)
	return files[0].Id
}

// catalogVoice returns the id of a catalog voice.
func catalogVoice(t testing.TB, ctx context.Context, c *client.Client) client.Voice {
	t.Helper()
	voices, err := c.Voices(ctx, client.VoiceFilter{Owner: client.VoiceOwnerService})
	require.NoError(t, err)
	require.NotEmpty(t, voices)
	return voices[0]
}
