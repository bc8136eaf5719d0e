package main

import (
	"bytes"
	"io"
	"os"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/redact"
)

// keyless is an output of the command with the API key masked in whatever
// is written to it, as it is and in every encoding a service's echo could
// carry it in (internal/redact): whatever the service sends back, the
// command prints no key. Each write is checked on its own; the command
// writes lines and tables whole.
type keyless struct {
	w   io.Writer
	key func() string
}

func (k keyless) Write(p []byte) (int, error) {
	out := redact.Bytes(p, k.key())
	if bytes.Equal(out, p) {
		return k.w.Write(p)
	}
	if _, err := k.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// underlying returns the writer a keyless wraps, for terminal checks.
func underlying(w io.Writer) io.Writer {
	if k, ok := w.(keyless); ok {
		return k.w
	}
	return w
}

// key returns the API key the command uses: --api-key, else
// MEDIAGEN_API_KEY.
func (a *app) key() string {
	if a.apiKey != "" {
		return a.apiKey
	}
	return os.Getenv(client.EnvAPIKey)
}
