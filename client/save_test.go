package client_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/journal"
)

// memObject is one output written in memory; closing it can fail.
type memObject struct {
	bytes.Buffer
	failClose bool
	closed    bool
}

func (w *memObject) Close() error {
	w.closed = true
	if w.failClose {
		return errors.New("bucket refused the object")
	}
	return nil
}

// memBucket is an OpenFunc's destination: every writer it opened, in order.
type memBucket struct {
	mu      sync.Mutex
	opened  []string // "<name> <media type>"
	objects map[string]*memObject
}

func (b *memBucket) open(_ context.Context, _ *mediagen.Generation, name, mediaType string) (io.WriteCloser, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	w := &memObject{}
	if b.objects == nil {
		b.objects = map[string]*memObject{}
	}
	b.opened = append(b.opened, name+" "+mediaType)
	b.objects[name] = w
	return w, nil
}

// SaveOutputFunc is SaveOutput to writers: the same outputs with their
// media types, the same checks, a broken transfer started over with a new
// writer, a keyed save recorded in the journal.
func TestSaveOutputFunc(t *testing.T) {
	srv, c, ctx := setup(t)
	voice := catalogVoice(t, ctx, c)

	t.Run("video and its poster", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.AvatarArgs{VoiceID: voice.ID, Script: "Welcome back.", AspectRatio: client.Aspect1x1, PermissionConfirmed: true})
		b := &memBucket{}
		require.NoError(t, c.SaveOutputFunc(ctx, g, b.open))
		assert.Equal(t, []string{"output video/mp4", "poster image/png"}, b.opened)
		want, _ := storedBytes(t, g.Output.Video)
		assert.Equal(t, want, b.objects["output"].Bytes())
		assert.True(t, b.objects["output"].closed && b.objects["poster"].closed)
	})
	t.Run("text goes through the writer too", func(t *testing.T) {
		g := &mediagen.Generation{ID: "gen_text", Status: mediagen.GenerationStatusDone, Kind: mediagen.KindText, Output: mediagen.Output{Text: "a haiku"}}
		b := &memBucket{}
		require.NoError(t, c.SaveOutputFunc(ctx, g, b.open))
		assert.Equal(t, []string{"output text/plain"}, b.opened)
		assert.Equal(t, "a haiku", b.objects["output"].String())
	})
	t.Run("a break midway starts over with a new writer", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a wren"})
		next := loopback(t)
		broken, rec := recorded(t, srv, func(r *http.Request, n int) (*http.Response, error) {
			if strings.HasPrefix(r.URL.Path, "/storage/") && n == 0 {
				return truncate(next, r)
			}
			return nil, nil
		})
		var writers []*memObject
		open := func(context.Context, *mediagen.Generation, string, string) (io.WriteCloser, error) {
			w := &memObject{}
			writers = append(writers, w)
			return w, nil
		}
		require.NoError(t, broken.SaveOutputFunc(ctx, g, open))
		require.Len(t, writers, 2)
		assert.True(t, writers[0].closed, "the broken transfer's writer was closed")
		want, _ := storedBytes(t, g.Output.URL())
		assert.Equal(t, want, writers[1].Bytes())
		assert.Len(t, rec.requests("/storage/"), 2)
	})
	t.Run("failures and refusals", func(t *testing.T) {
		g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a heron"})
		failing := func(context.Context, *mediagen.Generation, string, string) (io.WriteCloser, error) {
			return &memObject{failClose: true}, nil
		}
		assert.ErrorContains(t, c.SaveOutputFunc(ctx, g, failing), "bucket refused the object")
		refusing := func(context.Context, *mediagen.Generation, string, string) (io.WriteCloser, error) {
			return nil, errors.New("no bucket")
		}
		assert.ErrorContains(t, c.SaveOutputFunc(ctx, g, refusing), "no bucket")
		assert.ErrorIs(t, c.SaveOutputFunc(ctx, g, nil), client.ErrInvalidArgument)
		pending := &mediagen.Generation{ID: "gen_1", Status: mediagen.GenerationStatusPending}
		b := &memBucket{}
		assert.ErrorIs(t, c.SaveOutputFunc(ctx, pending, b.open), client.ErrInvalidArgument)
		assert.Empty(t, b.opened, "nothing opened")
	})
	t.Run("a keyed save is recorded", func(t *testing.T) {
		j := journal.NewMemory()
		kc := srv.Client(client.WithJournal(j))
		g, err := kc.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "kept"}, client.WithIdempotencyKey("job-9"))
		require.NoError(t, err)
		srv.Advance(10 * time.Minute)
		g, err = kc.GetGeneration(ctx, g.ID)
		require.NoError(t, err)
		require.NoError(t, kc.SaveOutputFunc(ctx, g, (&memBucket{}).open, client.WithIdempotencyKey("job-9")))
		for r, err := range kc.Unfinished(ctx) {
			t.Errorf("still unfinished: %+v %v", r, err)
		}
	})
}

// An OpenFunc that returns neither a writer nor an error fails the save
// with ErrInvalidArgument instead of panicking on the nil writer.
func TestSaveOutputFuncWithoutWriter(t *testing.T) {
	srv, c, ctx := setup(t)
	none := func(context.Context, *mediagen.Generation, string, string) (io.WriteCloser, error) { return nil, nil }
	g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a crane"})
	assert.ErrorIs(t, c.SaveOutputFunc(ctx, g, none), client.ErrInvalidArgument)
	text := &mediagen.Generation{ID: "gen_text", Status: mediagen.GenerationStatusDone, Kind: mediagen.KindText, Output: mediagen.Output{Text: "a haiku"}}
	assert.ErrorIs(t, c.SaveOutputFunc(ctx, text, none), client.ErrInvalidArgument)
}

// blobObject commits what was written when closed, as a blob storage
// writer does, unless the context it was opened with ended first: then
// the upload is aborted and nothing is stored.
type blobObject struct {
	ctx     context.Context
	buf     bytes.Buffer
	commit  func([]byte)
	aborted bool
}

func (w *blobObject) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *blobObject) Close() error {
	if err := w.ctx.Err(); err != nil {
		w.aborted = true
		return err
	}
	w.commit(w.buf.Bytes())
	return nil
}

// A transfer that breaks midway and then fails for good leaves no partial
// object committed under the output's name: the writer's context ends
// before the save closes a writer it abandons.
func TestSaveOutputFuncAbortsAbandonedWriters(t *testing.T) {
	srv, c, ctx := setup(t)
	g := doneGeneration(t, ctx, srv, c, client.ImageGenerationArgs{Prompt: "a swift"})
	next := loopback(t)
	broken, rec := recorded(t, srv, func(r *http.Request, n int) (*http.Response, error) {
		if strings.HasPrefix(r.URL.Path, "/storage/") {
			return truncate(next, r) // every attempt breaks midway
		}
		return nil, nil
	})
	var mu sync.Mutex
	committed := map[string][]byte{}
	var writers []*blobObject
	open := func(wctx context.Context, _ *mediagen.Generation, name, _ string) (io.WriteCloser, error) {
		w := &blobObject{ctx: wctx, commit: func(b []byte) {
			mu.Lock()
			defer mu.Unlock()
			committed[name] = bytes.Clone(b)
		}}
		writers = append(writers, w)
		return w, nil
	}
	require.Error(t, broken.SaveOutputFunc(ctx, g, open))
	require.Greater(t, len(rec.requests("/storage/")), 1, "the break was retried")
	assert.Empty(t, committed, "no partial object was committed")
	for i, w := range writers {
		assert.True(t, w.aborted, "writer %d was aborted", i)
	}

	// A whole transfer still commits, with the writer's context live.
	committed = map[string][]byte{}
	require.NoError(t, c.SaveOutputFunc(ctx, g, open))
	want, _ := storedBytes(t, g.Output.URL())
	assert.Equal(t, want, committed["output"])
}
