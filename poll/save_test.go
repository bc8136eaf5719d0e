package poll

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/journal"
)

func TestWithSaveTo(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	dir := t.TempDir()
	g, err := Generation(ctx, e.c, e.video(t).ID, withClock(e.clock), WithSaveTo(dir))
	require.NoError(t, err)
	for _, name := range []string{g.ID + ".mp4", g.ID + ".poster.png"} {
		info, err := os.Stat(filepath.Join(dir, name))
		require.NoError(t, err, name)
		assert.Positive(t, info.Size())
	}

	ids := []string{e.image(t).ID, e.image(t).ID}
	results, err := Generations(ctx, e.c, ids, withClock(e.clock), WithSaveTo(dir))
	require.NoError(t, err)
	for _, r := range results {
		assert.FileExists(t, filepath.Join(dir, r.ID+".png"))
	}
}

// memWriter collects one output in memory; closing it can fail.
type memWriter struct {
	bytes.Buffer
	failClose bool
	closed    bool
}

func (w *memWriter) Close() error {
	w.closed = true
	if w.failClose {
		return errors.New("bucket refused the object")
	}
	return nil
}

func TestWithSaveFunc(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	var mu sync.Mutex
	got := map[string]*memWriter{}
	open := func(_ context.Context, g *mediagen.Generation, name, mediaType string) (io.WriteCloser, error) {
		mu.Lock()
		defer mu.Unlock()
		w := &memWriter{}
		got[g.ID+"/"+name+" "+mediaType] = w
		return w, nil
	}
	g, err := Generation(ctx, e.c, e.video(t).ID, withClock(e.clock), WithSaveFunc(open))
	require.NoError(t, err)
	out, poster := got[g.ID+"/output video/mp4"], got[g.ID+"/poster image/png"]
	require.NotNil(t, out)
	require.NotNil(t, poster)
	assert.True(t, out.closed && poster.closed)
	var want bytes.Buffer
	require.NoError(t, e.c.Download(ctx, g.Output.Video, &want))
	assert.Equal(t, want.Bytes(), out.Bytes())

	// A failed save is reported with the generation, never skipped.
	failing := func(context.Context, *mediagen.Generation, string, string) (io.WriteCloser, error) {
		return &memWriter{failClose: true}, nil
	}
	g2, err := Generation(ctx, e.c, e.image(t).ID, withClock(e.clock), WithSaveFunc(failing))
	var se *SaveError
	require.ErrorAs(t, err, &se)
	assert.Same(t, g2, se.Generation)
	assert.ErrorContains(t, err, "bucket refused the object")

	_, err = Generation(ctx, e.c, "gen_1", WithSaveTo("x"), WithSaveFunc(open))
	assert.ErrorContains(t, err, "give one")
	_, err = Generation(ctx, e.c, "gen_1", WithSaveFunc(nil))
	assert.ErrorContains(t, err, "WithSaveFunc")
}

// With an idempotency key the journal records the save, so a restarted
// program does not list it as unfinished.
func TestSaveIsRecordedInTheJournal(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	j := journal.NewMemory()
	c := e.srv.Client(client.WithJournal(j))
	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "kept"}, client.WithIdempotencyKey("job-7"))
	require.NoError(t, err)
	_, err = Generation(ctx, c, g.ID, WithSaveTo(t.TempDir()), WithClientOptions(client.WithIdempotencyKey("job-7")))
	require.NoError(t, err)
	for r, err := range c.Unfinished(ctx) {
		t.Errorf("still unfinished: %+v %v", r, err)
	}
}
