package serve

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDialable(t *testing.T) {
	assert.Equal(t, "127.0.0.1:8080", dialable(&net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}))
	assert.Equal(t, "127.0.0.1:9", dialable(&net.TCPAddr{IP: net.IPv4zero, Port: 9}))
	assert.Equal(t, "10.1.2.3:7", dialable(&net.TCPAddr{IP: net.ParseIP("10.1.2.3"), Port: 7}))
}

func TestUsageCarriesTheName(t *testing.T) {
	c := Command{Name: "mediagen serve", About: "Runs it.\n"}
	var stdout, stderr bytes.Buffer
	err := c.Run(context.Background(), []string{"--help"}, &stdout, &stderr)
	require.ErrorIs(t, err, flag.ErrHelp)
	assert.Equal(t, 0, c.ExitCode(err, &stderr))
	assert.True(t, strings.HasPrefix(stdout.String(), "Usage: mediagen serve [flags]\n\nRuns it.\n"), stdout.String())
	assert.Contains(t, stdout.String(), "  -export")
	assert.Empty(t, stderr.String())

	stdout.Reset()
	err = c.Run(context.Background(), []string{"--addr", "127.0.0.1:0", "8080"}, &stdout, &stderr)
	var usage *UsageError
	require.True(t, errors.As(err, &usage), "a stray argument is a usage error: %v", err)
	assert.Equal(t, 2, c.ExitCode(err, io.Discard))
	assert.Contains(t, stderr.String(), `unexpected argument "8080"`)
	assert.Empty(t, stdout.String())

	stderr.Reset()
	assert.Equal(t, 1, c.ExitCode(errors.New("boom"), &stderr))
	assert.Equal(t, "mediagen serve: boom\n", stderr.String())
}

func TestExportPrefixesTheLines(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := Command{Name: "t"}.Run(ctx, []string{"--addr", "127.0.0.1:0", "--api-key", "K", "--export", "--test-control"}, pw, io.Discard)
		pw.Close()
		errc <- err
	}()
	sc := bufio.NewScanner(pr)
	var lines []string
	for len(lines) < 4 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.Len(t, lines, 4)
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "export MEDIAGEN_"), l)
	}
	assert.Equal(t, "export MEDIAGEN_API_KEY=K", lines[1])
	cancel()
	select {
	case err := <-errc:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
}

func TestUIServesThePageAndPrintsItsURL(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	errc := make(chan error, 1)
	go func() {
		err := Command{Name: "t"}.Run(ctx, []string{"--addr", "127.0.0.1:0", "--api-key", "K", "--ui"}, pw, io.Discard)
		pw.Close()
		errc <- err
	}()
	sc := bufio.NewScanner(pr)
	var lines []string
	for len(lines) < 4 && sc.Scan() {
		lines = append(lines, sc.Text())
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	require.Len(t, lines, 4)
	base := strings.TrimPrefix(lines[0], "MEDIAGEN_BASE_URL=")
	assert.Equal(t, "MEDIAGEN_UI_URL="+base+"/ui/", lines[3])

	resp, err := http.Get(base + "/ui/")
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	req, _ := http.NewRequest(http.MethodGet, base+"/ui/view", nil)
	req.Header.Set("Authorization", "K")
	resp, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	cancel()
	select {
	case err := <-errc:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not stop")
	}
}
