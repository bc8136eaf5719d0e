package upload

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/mediatype"
)

// seekOnly hides every method of *bytes.Reader but Read and Seek.
type seekOnly struct{ r *bytes.Reader }

func (s seekOnly) Read(p []byte) (int, error)                { return s.r.Read(p) }
func (s seekOnly) Seek(off int64, whence int) (int64, error) { return s.r.Seek(off, whence) }

// readAll opens src once and reads it through an exactReader.
func readAll(t *testing.T, src *source) ([]byte, error) {
	t.Helper()
	r, err := src.open()
	require.NoError(t, err)
	return io.ReadAll(&exactReader{r: r, size: src.size, strict: src.strict})
}

func TestSourceReaderAtFromCurrentOffset(t *testing.T) {
	br := bytes.NewReader([]byte("skip:hello world"))
	_, err := br.Seek(5, io.SeekStart)
	require.NoError(t, err)

	src := newSource(br, 11)
	assert.True(t, src.rereadable)
	head, err := src.peek()
	require.NoError(t, err)
	assert.Equal(t, "hello world", string(head))
	for range 2 {
		got, err := readAll(t, src)
		require.NoError(t, err)
		assert.Equal(t, "hello world", string(got))
	}
	pos, err := br.Seek(0, io.SeekCurrent)
	require.NoError(t, err)
	assert.EqualValues(t, 5, pos, "an io.ReaderAt is read without moving it")
}

func TestSourceSeekerRewinds(t *testing.T) {
	s := seekOnly{bytes.NewReader([]byte("hello world"))}
	src := newSource(s, 11)
	assert.True(t, src.rereadable)
	head, err := src.peek()
	require.NoError(t, err)
	assert.Equal(t, "hello world", string(head))
	for range 2 {
		got, err := readAll(t, src)
		require.NoError(t, err)
		assert.Equal(t, "hello world", string(got))
	}
}

func TestSourcePlainReaderKeepsPeekedBytes(t *testing.T) {
	content := strings.Repeat("0123456789", 100) // longer than the sniff length
	src := newSource(io.MultiReader(strings.NewReader(content)), int64(len(content)))
	assert.False(t, src.rereadable)
	head, err := src.peek()
	require.NoError(t, err)
	assert.Len(t, head, mediatype.SniffLen)
	again, err := src.peek()
	require.NoError(t, err)
	assert.Equal(t, head, again, "peeking twice reads once")
	got, err := readAll(t, src)
	require.NoError(t, err)
	assert.Equal(t, content, string(got))
}

func TestExactReader(t *testing.T) {
	tests := []struct {
		name    string
		content string
		size    int64
		strict  bool
		want    string
		wantErr bool
	}{
		{"exact", "abcdef", 6, true, "abcdef", false},
		{"short", "abc", 6, true, "abc", true},
		{"long and strict: the last read is withheld", "abcdefgh", 6, true, "", true},
		{"long, not strict, cut at size", "abcdefgh", 6, false, "abcdef", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := io.ReadAll(&exactReader{r: strings.NewReader(tt.content), size: tt.size, strict: tt.strict})
			assert.Equal(t, tt.want, string(got))
			if tt.wantErr {
				assert.ErrorIs(t, err, ErrSizeMismatch)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

func TestProgressReader(t *testing.T) {
	content := strings.Repeat("x", 10_000)
	var calls [][2]int64
	r := withProgress(strings.NewReader(content), int64(len(content)), func(sent, total int64) {
		calls = append(calls, [2]int64{sent, total})
	})
	buf := make([]byte, 3000)
	var n int
	for {
		m, err := r.Read(buf)
		n += m
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
	}
	assert.Equal(t, len(content), n)
	require.Len(t, calls, 4)
	for i, c := range calls {
		assert.EqualValues(t, len(content), c[1])
		if i > 0 {
			assert.Greater(t, c[0], calls[i-1][0])
		}
	}
	assert.EqualValues(t, len(content), calls[len(calls)-1][0])

	plain := strings.NewReader(content)
	assert.Same(t, plain, withProgress(plain, 1, nil).(*strings.Reader), "no callback, no wrapper")
}

// withProgress wraps r to report to fn, or returns r when fn is nil.
func withProgress(r io.Reader, total int64, fn func(sent, total int64)) io.Reader {
	return (&progress{fn: fn, total: total}).reader(r)
}
