package client_test

import (
	"bytes"
	"context"
	"errors"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
)

// storedBytes reads a storage URL as a plain HTTP client would: the bytes storage
// holds, to compare the client's downloads with.
func storedBytes(t *testing.T, url string) ([]byte, string) {
	t.Helper()
	resp, err := (&http.Client{Transport: loopback(t)}).Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return b, resp.Header.Get("Content-Type")
}

// assertStorageError checks that err is a storage refusal of a GET with
// status code, and that it does not quote the signed URL's credential.
func assertStorageError(t *testing.T, err error, code int) {
	t.Helper()
	var se *client.StorageError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.MethodGet, se.Method)
	assert.Equal(t, code, se.StatusCode)
	assert.False(t, se.Retryable)
	assert.NotContains(t, err.Error(), "signature=")
	assert.NotContains(t, err.Error(), "expires=")
}

func TestDownload(t *testing.T) {
	srv, _, ctx := setup(t)
	c, rec := recorded(t, srv, nil, client.WithHeader("X-Team", "media"))
	g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a lighthouse"})
	require.NotEmpty(t, g.Output.Image)
	assert.Equal(t, g.Output.Image, g.Output.URL())

	var buf bytes.Buffer
	require.NoError(t, c.Download(ctx, g.Output.URL(), &buf))
	want, ct := storedBytes(t, g.Output.URL())
	assert.Equal(t, want, buf.Bytes(), "the asset's bytes")
	assert.Equal(t, g.Output.MIME, ct)
	_, err := png.DecodeConfig(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err, "a whole PNG")

	storage := rec.requests("/storage/")
	require.Len(t, storage, 1)
	assert.Empty(t, storage[0].Header.Values("Authorization"), "the key never reaches storage")
	assert.Empty(t, storage[0].Header.Values("X-Team"), "nor the caller's API headers")
	assert.NotEmpty(t, rec.requests("/v3/")[0].Header.Get("Authorization"))

	// A deleted generation's asset is removed with it.
	require.NoError(t, c.DeleteGeneration(ctx, g.ID))
	buf.Reset()
	err = c.Download(ctx, g.Output.URL(), &buf)
	require.ErrorIs(t, err, client.ErrNotFound)
	assert.NotErrorIs(t, err, client.ErrExpired)
	assertStorageError(t, err, http.StatusNotFound)
	assert.Zero(t, buf.Len())
	assert.Len(t, rec.requests("/storage/"), 2, "a 404 is not retried")
}

func TestDownloadExpired(t *testing.T) {
	t.Run("output URL past its expiry", func(t *testing.T) {
		srv, c, ctx := setup(t)
		g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a fox"})
		srv.Advance(24 * time.Hour)
		err := c.Download(ctx, g.Output.URL(), io.Discard)
		require.ErrorIs(t, err, client.ErrExpired)
		assert.NotErrorIs(t, err, client.ErrNotFound)
		assertStorageError(t, err, http.StatusForbidden)
		assert.Contains(t, err.Error(), "signed URL")
	})
	t.Run("preview URL past its expiry, the voice still there", func(t *testing.T) {
		srv, c, ctx := setup(t)
		v := catalogVoice(t, ctx, c)
		require.NotEmpty(t, v.Preview)
		var buf bytes.Buffer
		require.NoError(t, c.Download(ctx, v.Preview, &buf))
		want, _ := storedBytes(t, v.Preview)
		assert.Equal(t, want, buf.Bytes())

		srv.Advance(6*time.Hour + time.Second)
		err := c.Download(ctx, v.Preview, io.Discard)
		require.ErrorIs(t, err, client.ErrExpired)
		assertStorageError(t, err, http.StatusForbidden)

		fresh, err := c.GetVoice(ctx, v.ID)
		require.NoError(t, err)
		require.NoError(t, c.Download(ctx, fresh.Preview, io.Discard), "a fresh read signs a fresh URL")
	})
	t.Run("generation expired, its URL not yet", func(t *testing.T) {
		// Signed URLs carry whole seconds, rounded up: a generation requested
		// mid-second expires before its URL does, and storage checks the
		// generation's own expiry.
		srv, c, ctx := setup(t)
		srv.Advance(400 * time.Millisecond)
		g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a lynx"})
		srv.Advance(g.ExpiresAt.Sub(srv.Now()) + 100*time.Millisecond)
		err := c.Download(ctx, g.Output.URL(), io.Discard)
		require.ErrorIs(t, err, client.ErrNotFound)
		assert.NotErrorIs(t, err, client.ErrExpired)
		assertStorageError(t, err, http.StatusNotFound)
	})
}

// truncate sends r on and cuts the answer's body after half its bytes, as a
// connection that breaks mid-transfer does.
func truncate(next http.RoundTripper, r *http.Request) (*http.Response, error) {
	resp, err := next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(io.MultiReader(bytes.NewReader(b[:len(b)/2]), errReader{io.ErrUnexpectedEOF}))
	resp.ContentLength = int64(len(b))
	return resp, nil
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func TestDownloadRetries(t *testing.T) {
	srv, clean, ctx := setup(t)
	g := doneGeneration(t, ctx, srv, clean, client.ImageGenerationArgs{Prompt: "a kite"})
	want, _ := storedBytes(t, g.Output.URL())
	next := loopback(t)

	t.Run("a transient 503 is retried", func(t *testing.T) {
		c, rec := recorded(t, srv, func(r *http.Request, n int) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/storage/") && n < 2 {
				return synthetic(r, http.StatusServiceUnavailable, "", nil), nil
			}
			return nil, nil
		})
		var buf bytes.Buffer
		require.NoError(t, c.Download(ctx, g.Output.URL(), &buf))
		assert.Equal(t, want, buf.Bytes())
		assert.Len(t, rec.requests("/storage/"), 3)
	})
	t.Run("retries end with the policy", func(t *testing.T) {
		c, rec := recorded(t, srv, func(r *http.Request, _ int) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/storage/") {
				return synthetic(r, http.StatusBadGateway, "", nil), nil
			}
			return nil, nil
		})
		err := c.Download(ctx, g.Output.URL(), io.Discard, client.WithMaxRetries(2))
		assertStorageError(t, err, http.StatusBadGateway)
		assert.Len(t, rec.requests("/storage/"), 3)
	})
	t.Run("a Retry-After beyond the longest wait is returned", func(t *testing.T) {
		c, rec := recorded(t, srv, func(r *http.Request, _ int) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/storage/") {
				return synthetic(r, http.StatusTooManyRequests, "", map[string]string{"Retry-After": "60"}), nil
			}
			return nil, nil
		})
		err := c.Download(ctx, g.Output.URL(), io.Discard)
		assertStorageError(t, err, http.StatusTooManyRequests)
		assert.Len(t, rec.requests("/storage/"), 1)
	})
	t.Run("a break after bytes reached the writer", func(t *testing.T) {
		c, rec := recorded(t, srv, func(r *http.Request, _ int) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/storage/") {
				return truncate(next, r)
			}
			return nil, nil
		})
		var buf bytes.Buffer
		err := c.Download(ctx, g.Output.URL(), &buf)
		var se *client.StorageError
		require.ErrorAs(t, err, &se, "documented: a *StorageError with Retryable set")
		assert.True(t, se.Retryable)
		assert.NotContains(t, err.Error(), "signature=")
		assert.Len(t, rec.requests("/storage/"), 1, "the writer cannot take the bytes twice")
		assert.Equal(t, want[:len(want)/2], buf.Bytes())
	})
	t.Run("the writer's own failure is not retried", func(t *testing.T) {
		c, rec := recorded(t, srv, nil)
		boom := errors.New("disk full")
		err := c.Download(ctx, g.Output.URL(), failingWriter{boom})
		require.ErrorIs(t, err, boom)
		assert.Len(t, rec.requests("/storage/"), 1)
	})
	t.Run("the context ends the wait", func(t *testing.T) {
		// On the wall clock: a wait of the server's clock would pass at once.
		c, _ := recorded(t, srv, func(r *http.Request, _ int) (*http.Response, error) {
			return synthetic(r, http.StatusServiceUnavailable, "", nil), nil
		}, client.WithRetryWait(time.Hour, time.Hour), client.WithClock(wallClock(t)))
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		err := c.Download(short, g.Output.URL(), io.Discard)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	t.Run("refused before sending", func(t *testing.T) {
		c, rec := recorded(t, srv, nil)
		err := c.Download(ctx, "/storage/generations/x?signature=s3cret", io.Discard)
		require.ErrorIs(t, err, client.ErrInvalidArgument)
		assert.NotContains(t, err.Error(), "s3cret")
		err = c.Download(ctx, "ftp://host/x", io.Discard)
		require.ErrorIs(t, err, client.ErrInvalidArgument)
		err = c.Download(ctx, g.Output.URL(), nil)
		require.ErrorIs(t, err, client.ErrInvalidArgument)
		assert.Empty(t, rec.requests("/"))
	})
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// assertSaved checks that path holds exactly the bytes at url.
func assertSaved(t *testing.T, path, url string) {
	t.Helper()
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	want, _ := storedBytes(t, url)
	assert.Equal(t, want, got, path)
}

// assertNoPartials checks that no temporary file was left in dir.
func assertNoPartials(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasSuffix(e.Name(), ".part"), e.Name())
	}
}

func TestSaveOutput(t *testing.T) {
	srv, c, ctx := setup(t)
	voice := catalogVoice(t, ctx, c)

	t.Run("image", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a heron"})
		dir := filepath.Join(t.TempDir(), "new", "folder")
		saved, err := c.SaveOutput(ctx, g, dir)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, g.ID+".png"), saved.Path)
		assert.Empty(t, saved.PosterPath)
		assertSaved(t, saved.Path, g.Output.URL())
		assertNoPartials(t, dir)
		assertCreatedMode(t, saved.Path)
	})
	t.Run("video and its poster", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.AvatarArgs{VoiceID: voice.ID, Script: "Welcome back.", AspectRatio: client.Aspect1x1, PermissionConfirmed: true})
		require.Equal(t, mediagen.KindVideo, g.Kind)
		require.NotEmpty(t, g.Output.Poster)
		dir := t.TempDir()
		saved, err := c.SaveOutput(ctx, g, dir)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, g.ID+".mp4"), saved.Path)
		assert.Equal(t, filepath.Join(dir, g.ID+".poster.png"), saved.PosterPath)
		assertSaved(t, saved.Path, g.Output.Video)
		// The poster is a frame-sized PNG, slow to make under the race
		// detector: its header is checked instead of a second download.
		f, err := os.Open(saved.PosterPath)
		require.NoError(t, err)
		defer f.Close()
		poster, err := png.DecodeConfig(f)
		require.NoError(t, err)
		assert.Equal(t, [2]int{g.Output.Width, g.Output.Height}, [2]int{poster.Width, poster.Height})
		assertNoPartials(t, dir)
	})
	t.Run("audio", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.VoiceoverArgs{VoiceID: voice.ID, Script: "Hello there."})
		require.Equal(t, mediagen.KindAudio, g.Kind)
		dir := t.TempDir()
		saved, err := c.SaveOutput(ctx, g, dir)
		require.NoError(t, err)
		assert.Equal(t, filepath.Join(dir, g.ID+".wav"), saved.Path)
		assert.Empty(t, saved.PosterPath)
		assertSaved(t, saved.Path, g.Output.Audio)
	})
	t.Run("an empty dir is the current directory", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a heron at home"})
		dir := t.TempDir()
		t.Chdir(dir)
		saved, err := c.SaveOutput(ctx, g, "")
		require.NoError(t, err)
		assert.Equal(t, g.ID+".png", saved.Path)
		assertSaved(t, filepath.Join(dir, saved.Path), g.Output.URL())
	})
	t.Run("a break midway starts the file over", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a wren"})
		next := loopback(t)
		broken, rec := recorded(t, srv, func(r *http.Request, n int) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/storage/") && n == 0 {
				return truncate(next, r)
			}
			return nil, nil
		})
		dir := t.TempDir()
		saved, err := broken.SaveOutput(ctx, g, dir)
		require.NoError(t, err)
		assertSaved(t, saved.Path, g.Output.URL())
		assert.Len(t, rec.requests("/storage/"), 2)
		assertNoPartials(t, dir)
	})
	t.Run("a failed download leaves nothing behind", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a gone bird"})
		require.NoError(t, c.DeleteGeneration(ctx, g.ID))
		dir := t.TempDir()
		_, err := c.SaveOutput(ctx, g, dir)
		require.ErrorIs(t, err, client.ErrNotFound)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		assert.Empty(t, entries)
	})
	t.Run("only a done generation", func(t *testing.T) {
		pending, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "not yet"})
		require.NoError(t, err)
		require.Equal(t, mediagen.GenerationStatusPending, pending.Status)
		dir := filepath.Join(t.TempDir(), "out")
		_, err = c.SaveOutput(ctx, pending, dir)
		require.ErrorIs(t, err, client.ErrInvalidArgument)
		assert.Contains(t, err.Error(), "pending")
		assert.NoDirExists(t, dir, "nothing created")

		failed := &mediagen.Generation{ID: "gen_1", Status: mediagen.GenerationStatusError, Error: "render failed"}
		_, err = c.SaveOutput(ctx, failed, dir)
		require.ErrorIs(t, err, client.ErrInvalidArgument)
		_, err = c.SaveOutput(ctx, nil, dir)
		require.ErrorIs(t, err, client.ErrInvalidArgument)
	})
	t.Run("a hostile id stays in the folder", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "an egret"})
		hostile := *g
		hostile.ID = "../../" + g.ID
		dir := t.TempDir()
		saved, err := c.SaveOutput(ctx, &hostile, dir)
		require.NoError(t, err)
		assert.Equal(t, dir, filepath.Dir(saved.Path))
	})
}

// assertCreatedMode checks that path has the permissions of a file made
// with os.Create in the same folder: 0666 less the umask (0644 under 022),
// as a person opening the output expects, not os.CreateTemp's 0600.
func assertCreatedMode(t *testing.T, path string) {
	t.Helper()
	ref := filepath.Join(filepath.Dir(path), "reference")
	f, err := os.Create(ref)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	defer os.Remove(ref)
	want, err := os.Stat(ref)
	require.NoError(t, err)
	got, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, want.Mode().Perm(), got.Mode().Perm())
}
