package upload

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
)

// silentClient returns a client whose every request fails the test: the
// refusals below must happen before anything is sent.
func silentClient(t *testing.T) *client.Client {
	t.Helper()
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, "unexpected request", http.StatusTeapot)
	}))
	t.Cleanup(func() {
		srv.Close()
		assert.Zero(t, requests.Load(), "a refused upload sent a request")
	})
	c, err := client.New("test-key", client.WithBaseURL(srv.URL), client.WithMaxRetries(0))
	require.NoError(t, err)
	return c
}

// writeFile writes content to name in a temporary directory.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
	return path
}

// sparseFile makes a file of size bytes without writing them.
func sparseFile(t *testing.T, size int64) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big.bin")
	f, err := os.Create(path)
	require.NoError(t, err)
	_, err = f.WriteString(headPNG)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())
	return path
}

func TestFileRefusesBeforeSending(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		path func(t *testing.T) string
		opts []Option
		want error
	}{
		{"empty", func(t *testing.T) string { return writeFile(t, "empty.png", "") }, nil, ErrEmpty},
		{"one byte over 30 MB", func(t *testing.T) string { return sparseFile(t, MaxFileSize+1) }, nil, ErrTooLarge},
		{"html detected", func(t *testing.T) string { return writeFile(t, "page.txt", headHTML) }, nil, ErrUnsupportedType},
		{"unknown bytes named .png", func(t *testing.T) string { return writeFile(t, "logo.png", headBytes) }, nil, ErrUnsupportedType},
		{"declared type refused", func(t *testing.T) string { return writeFile(t, "logo.png", headPNG) }, []Option{WithContentType("image/jpg")}, ErrUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := File(ctx, silentClient(t), tt.path(t), tt.opts...)
			assert.Nil(t, f)
			assert.ErrorIs(t, err, tt.want)
		})
	}

	t.Run("directory", func(t *testing.T) {
		_, err := File(ctx, silentClient(t), t.TempDir())
		assert.ErrorContains(t, err, "not a regular file")
	})
	t.Run("missing file", func(t *testing.T) {
		_, err := File(ctx, silentClient(t), filepath.Join(t.TempDir(), "nope.png"))
		assert.ErrorIs(t, err, os.ErrNotExist)
	})
	t.Run("nil progress", func(t *testing.T) {
		_, err := File(ctx, silentClient(t), writeFile(t, "logo.png", headPNG), WithProgress(nil))
		assert.ErrorContains(t, err, "WithProgress")
	})
}

func TestReaderRefusesBeforeSending(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name        string
		r           io.Reader
		size        int64
		contentType string
		want        error
	}{
		{"empty", strings.NewReader(""), 0, "image/png", ErrEmpty},
		{"negative size", strings.NewReader(headPNG), -1, "image/png", ErrEmpty},
		{"one byte over 30 MB", strings.NewReader(headPNG), MaxFileSize + 1, "image/png", ErrTooLarge},
		{"declared type refused", strings.NewReader(headPNG), int64(len(headPNG)), "image/jpg", ErrUnsupportedType},
		{"detected type refused", strings.NewReader(headHTML), int64(len(headHTML)), "", ErrUnsupportedType},
		{"plain reader with refused content", io.MultiReader(strings.NewReader(headBytes)), int64(len(headBytes)), "", ErrUnsupportedType},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Reader(ctx, silentClient(t), tt.r, tt.size, tt.contentType)
			assert.Nil(t, f)
			assert.ErrorIs(t, err, tt.want)
		})
	}
	t.Run("nil reader", func(t *testing.T) {
		_, err := Reader(ctx, silentClient(t), nil, 10, "image/png")
		assert.ErrorContains(t, err, "nil reader")
	})
}

func TestCheckSizeBounds(t *testing.T) {
	assert.NoError(t, checkSize("f", 1))
	assert.NoError(t, checkSize("f", MaxFileSize), "exactly 30 MB is accepted")
	assert.EqualValues(t, 31_457_280, MaxFileSize)
	assert.ErrorIs(t, checkSize("f", MaxFileSize+1), ErrTooLarge)
	assert.ErrorIs(t, checkSize("f", 0), ErrEmpty)
}

func TestNilClient(t *testing.T) {
	ctx := context.Background()
	_, err := File(ctx, nil, writeFile(t, "logo.png", headPNG))
	assert.ErrorContains(t, err, "nil client")
	_, err = Reader(ctx, nil, strings.NewReader(headPNG), int64(len(headPNG)), "")
	assert.ErrorContains(t, err, "nil client")
	_, err = Multipart(ctx, nil, []Part{{Reader: strings.NewReader(headPNG), Size: int64(len(headPNG))}})
	assert.ErrorContains(t, err, "nil client")
}
