package client_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/client/journal"
)

func TestPricing(t *testing.T) {
	_, c, ctx := setup(t)
	p, err := c.Pricing(ctx)
	require.NoError(t, err)
	for _, f := range append(client.Features(), mediagen.FeatureVoiceClone) {
		e, ok := p[f]
		require.True(t, ok, f)
		assert.Positive(t, e.Price, f)
		require.NotEmpty(t, e.Unit, f)
	}
	assert.Equal(t, mediagen.PricingUnitPer15Seconds, p[mediagen.FeatureVideoAvatar].Unit)
	legacy, ok := p.Entry("logo-reveal")
	require.True(t, ok)
	assert.Equal(t, p[mediagen.FeatureVideoLogoReveal], legacy)
	_, ok = p.Entry("video/unknown")
	assert.False(t, ok)
}

func TestPricingReadsAmountAsPrice(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"prices":{"image/ad":{"amount":0.08,"unit":"call"}}}`))
	}))
	t.Cleanup(srv.Close)
	c, err := client.New("mg_key_123456", client.WithBaseURL(srv.URL))
	require.NoError(t, err)
	p, err := c.Pricing(t.Context())
	require.NoError(t, err)
	e, ok := p.Entry("ad")
	require.True(t, ok)
	assert.Equal(t, 0.08, e.Price)
	est, err := p.Estimate(client.AdArgs{Image: "f", Prompt: "p"})
	require.NoError(t, err)
	assert.Equal(t, 0.08, est.Min)
}

// The price list Pricing returns is the caller's: changing it (a markup for
// display, a pruned copy) does not change, or race with, the prices the
// client keeps for the estimates its keyed calls record.
func TestPricingReturnsTheCallersCopy(t *testing.T) {
	srv := clienttest.NewServer(t)
	j := journal.NewMemory()
	c := srv.Client(client.WithJournal(j))
	ctx := t.Context()
	p, err := c.Pricing(ctx)
	require.NoError(t, err)
	e := p[mediagen.FeatureImageGeneration]
	e.Variants["fineDetails"]["on"] = 100
	e.Price = 10
	p[mediagen.FeatureImageGeneration] = e
	delete(p, mediagen.FeatureVideoLogoReveal)

	_, err = c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a heron", FineDetails: true}, client.WithIdempotencyKey("k1"))
	require.NoError(t, err)
	rec, err := j.Get(ctx, "k1")
	require.NoError(t, err)
	assert.InDelta(t, 0.06, rec.Estimate, 1e-9, "the service's price: 0.04 x 1.5")
	assert.InDelta(t, clienttest.Balance-0.06, srv.Balance(), 1e-9)

	img := uploadPNG(t, ctx, c)
	_, err = c.CreateGeneration(ctx, client.LogoRevealArgs{Image: img, Prompt: "sparks"}, client.WithIdempotencyKey("k2"))
	require.NoError(t, err)
	rec, err = j.Get(ctx, "k2")
	require.NoError(t, err)
	assert.InDelta(t, 0.5, rec.Estimate, 1e-9, "0.10 x 5 seconds")
}
