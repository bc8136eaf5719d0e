package client_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
)

func TestNewErrors(t *testing.T) {
	t.Setenv(client.EnvAPIKey, "")
	t.Setenv(client.EnvBaseURL, "")
	_, err := client.New("", client.WithBaseURL("https://api.example.com"))
	assert.ErrorIs(t, err, client.ErrNoAPIKey)
	assert.Contains(t, err.Error(), client.EnvAPIKey)
	_, err = client.New("mg_key_123456")
	assert.ErrorIs(t, err, client.ErrNoBaseURL)
	assert.Contains(t, err.Error(), client.EnvBaseURL)

	for name, opt := range map[string]client.Option{
		"relative URL":       client.WithBaseURL("api.example.com"),
		"other scheme":       client.WithBaseURL("ftp://api.example.com"),
		"credentials in URL": client.WithBaseURL("https://user:pw@api.example.com"),
		"nil HTTP client":    client.WithHTTPClient(nil),
		"negative retries":   client.WithMaxRetries(-1),
		"min above max":      client.WithRetryWait(time.Second, time.Millisecond),
		"line break in UA":   client.WithUserAgent("x\r\nAuthorization: y"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := client.New("mg_key_123456", client.WithBaseURL("https://api.example.com"), opt)
			require.Error(t, err)
			assert.NotContains(t, err.Error(), "mg_key_123456")
		})
	}
}

func TestBaseURLErrorsDoNotQuoteCredentials(t *testing.T) {
	for _, u := range []string{
		"ftp://user:s3cretpass@api.example.com",
		"https://user:s3cretpass@api.example.com/%zz",
		"user:s3cretpass@api.example.com",
	} {
		_, err := client.New("mg_key_123456", client.WithBaseURL(u))
		require.Error(t, err, u)
		assert.NotContains(t, err.Error(), "s3cretpass", u)
	}
}
