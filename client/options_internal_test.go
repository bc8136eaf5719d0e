package client

import (
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAttemptTimeouts: every attempt is bounded by default, API requests
// and storage transfers each by their own default; the Timeout of the
// caller's http.Client stands in for both, and WithTimeout and
// WithTransferTimeout win, each for its own.
func TestAttemptTimeouts(t *testing.T) {
	newClient := func(opts ...Option) *Client {
		t.Helper()
		c, err := New("mg_key_123456", append([]Option{WithBaseURL("https://api.example.com")}, opts...)...)
		require.NoError(t, err)
		return c
	}
	timeouts := func(cfg *config) [2]time.Duration {
		return [2]time.Duration{cfg.call.Timeout, cfg.call.Transfer}
	}

	c := newClient()
	assert.Equal(t, [2]time.Duration{DefaultTimeout, DefaultTransferTimeout}, timeouts(c.base))
	jar, err := cookiejar.New(nil)
	require.NoError(t, err)
	c = newClient(WithHTTPClient(&http.Client{Timeout: 7 * time.Second, Jar: jar}))
	assert.Equal(t, [2]time.Duration{7 * time.Second, 7 * time.Second}, timeouts(c.base))
	c = newClient(WithTimeout(2*time.Second), WithHTTPClient(&http.Client{Timeout: 7 * time.Second}))
	assert.Equal(t, [2]time.Duration{2 * time.Second, 7 * time.Second}, timeouts(c.base))
	c = newClient(WithTransferTimeout(time.Hour), WithHTTPClient(&http.Client{Timeout: 7 * time.Second}))
	assert.Equal(t, [2]time.Duration{7 * time.Second, time.Hour}, timeouts(c.base))
	c = newClient(WithTimeout(0), WithTransferTimeout(0))
	assert.Equal(t, [2]time.Duration{0, 0}, timeouts(c.base), "0: only the context bounds an attempt")

	c = newClient()
	cfg, err := c.configure([]Option{WithTimeout(time.Second)})
	require.NoError(t, err)
	assert.Equal(t, [2]time.Duration{time.Second, DefaultTransferTimeout}, timeouts(cfg), "a short API timeout leaves transfers alone")
	assert.Equal(t, [2]time.Duration{DefaultTimeout, DefaultTransferTimeout}, timeouts(c.base), "a call's options leave the client's alone")
	cfg, err = c.configure([]Option{WithTransferTimeout(3 * time.Second)})
	require.NoError(t, err)
	assert.Equal(t, 3*time.Second, cfg.call.Transfer)
	_, err = c.configure([]Option{WithTransferTimeout(-time.Second)})
	assert.ErrorContains(t, err, "WithTransferTimeout")
	same, err := c.configure(nil)
	require.NoError(t, err)
	assert.Same(t, c.base, same, "a call without options uses the client's configuration")
}

func TestStorageMessage(t *testing.T) {
	assert.Equal(t, "the signed URL expired", storageMessage([]byte(`{"error":{"code":"forbidden","message":"the signed URL expired"}}`)))
	assert.Equal(t, "storage busy", storageMessage([]byte(" storage busy\n")))
}
