package refserver

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
)

// contextWithProject is the context the auth middleware gives a handler.
func contextWithProject(p *project) context.Context {
	ctx := context.WithValue(context.Background(), projectKey{}, p)
	return context.WithValue(ctx, baseKey{}, "http://refserver.test")
}

// createRequest builds the strict request object of a submission.
func createRequest(feat string, args map[string]any) api.CreateGenerationRequestObject {
	return api.CreateGenerationRequestObject{Body: &api.CreateGenerationRequest{Feature: mediagen.Feature(feat), Args: args}}
}

func TestProjects(t *testing.T) {
	s := New(WithProject("k1", 12.5))
	defer s.Close()
	p1, ok := s.Project("k1")
	require.True(t, ok)
	assert.Equal(t, "k1", p1.APIKey)
	assert.True(t, strings.HasPrefix(p1.WebhookSecret, "whsec_"))
	assert.Equal(t, 12.5, s.Balance("k1"))

	p2 := s.AddProject("k2", 3)
	assert.NotEqual(t, p1.WebhookSecret, p2.WebhookSecret)
	again := s.AddProject("k1", 7)
	assert.Equal(t, p1, again, "an existing key keeps its secret")
	assert.Equal(t, 7.0, s.Balance("k1"))

	s.SetBalance("k2", 0.12345)
	assert.Equal(t, 0.1235, s.Balance("k2"), "balances hold 1/10,000 USD")
	s.SetBalance("nobody", 5)
	assert.Equal(t, 0.0, s.Balance("nobody"))
	_, ok = s.Project("nobody")
	assert.False(t, ok)
}

func TestStrictMethodsWithoutAProjectAnswer401(t *testing.T) {
	s := New()
	defer s.Close()
	resp, err := s.GetPricing(context.Background(), api.GetPricingRequestObject{})
	require.NoError(t, err)
	e, ok := resp.(*apiError)
	require.True(t, ok)
	assert.Equal(t, 401, e.status)
}

func TestWebhookSecretRotation(t *testing.T) {
	clock := NewFakeClock(testStart)
	s := New(WithClock(clock), WithProject("k", 1))
	defer s.Close()
	old, _ := s.Project("k")
	assert.Equal(t, []string{old.WebhookSecret}, s.WebhookSecrets("k"))

	rotated, ok := s.RotateWebhookSecret("k")
	require.True(t, ok)
	assert.NotEqual(t, old.WebhookSecret, rotated.WebhookSecret)
	assert.True(t, strings.HasPrefix(rotated.WebhookSecret, "whsec_"))
	cur, _ := s.Project("k")
	assert.Equal(t, rotated, cur, "the new secret applies at once")
	assert.Equal(t, []string{rotated.WebhookSecret, old.WebhookSecret}, s.WebhookSecrets("k"))

	clock.Advance(24 * time.Hour)
	assert.Equal(t, []string{rotated.WebhookSecret}, s.WebhookSecrets("k"), "the overlap lasts 24 hours")

	_, ok = s.RotateWebhookSecret("nobody")
	assert.False(t, ok)
	assert.Nil(t, s.WebhookSecrets("nobody"))
}
