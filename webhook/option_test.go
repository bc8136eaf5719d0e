package webhook_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/webhook"
)

// invalidOptions is one option of each kind given a value it cannot use,
// with the name its error must carry.
var invalidOptions = []struct {
	name string
	opt  webhook.Option
}{
	{"WithTolerance", webhook.WithTolerance(0)},
	{"WithNow", webhook.WithNow(nil)},
	{"WithMaxBodyBytes", webhook.WithMaxBodyBytes(-1)},
	{"WithAsync", webhook.WithAsync(0, 10)},
	{"WithAckTimeout", webhook.WithAckTimeout(-time.Second)},
	{"WithReadTimeout", webhook.WithReadTimeout(0)},
	{"WithErrorFunc", webhook.WithErrorFunc(nil)},
}

// TestOptionReturnsItsError checks that an option given a bad value returns
// its own error, wrapping ErrInvalidOption and naming the option, before it
// touches anything (so applying it to nil is safe).
func TestOptionReturnsItsError(t *testing.T) {
	for _, tt := range invalidOptions {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opt(nil)
			require.ErrorIs(t, err, webhook.ErrInvalidOption)
			assert.True(t, strings.HasPrefix(err.Error(), webhook.ErrInvalidOption.Error()+": "+tt.name+"("), "%q", err)
		})
	}
}

// TestInvalidOptionsAllReported checks that Verify, Parse and Handler report
// every bad option at once, joined, and skip nil options.
func TestInvalidOptionsAllReported(t *testing.T) {
	opts := []webhook.Option{nil, webhook.WithSecrets("t")}
	for _, tt := range invalidOptions {
		opts = append(opts, tt.opt, nil)
	}
	check := func(t *testing.T, err error) {
		t.Helper()
		require.ErrorIs(t, err, webhook.ErrInvalidOption)
		joined, ok := err.(interface{ Unwrap() []error })
		require.True(t, ok, "errors joined: %T", err)
		assert.Len(t, joined.Unwrap(), len(invalidOptions))
		for _, tt := range invalidOptions {
			assert.Contains(t, err.Error(), tt.name+"(")
		}
	}

	t.Run("Verify", func(t *testing.T) {
		check(t, webhook.Verify([]byte("{}"), http.Header{}, "s", opts...))
	})
	t.Run("Parse", func(t *testing.T) {
		ev, err := webhook.Parse([]byte("{}"), http.Header{}, "s", opts...)
		assert.Nil(t, ev)
		check(t, err)
	})
	t.Run("Handler", func(t *testing.T) {
		fn := func(context.Context, *webhook.Event) error { return nil }
		h, err := webhook.Handler("s", fn, opts...)
		assert.Nil(t, h)
		check(t, err)
	})
}

// TestNilOptionsSkipped checks that nil options are no error and change nothing.
func TestNilOptionsSkipped(t *testing.T) {
	err := webhook.Verify([]byte("{}"), http.Header{}, "s", nil, nil)
	require.ErrorIs(t, err, webhook.ErrMissingHeader, "got past the options to the headers")
	assert.NotErrorIs(t, err, webhook.ErrInvalidOption)
}
