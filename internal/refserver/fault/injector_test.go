package fault

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestOutcomeProbabilities(t *testing.T) {
	in := mustNew(t, Config{Seed: 1, RenderError: 0.2, RenderTimeout: 0.1})
	const n = 10000
	counts := map[string]int{}
	for range n {
		counts[in.Outcome("image/generation")]++
	}
	// 0.02 is about five standard deviations at n = 10,000.
	assert.InDelta(t, 0.2, float64(counts[OutcomeError])/n, 0.02)
	assert.InDelta(t, 0.1, float64(counts[OutcomeTimeout])/n, 0.02)
	assert.InDelta(t, 0.7, float64(counts[OutcomeDone])/n, 0.02)
	st := in.Stats()
	assert.Equal(t, int64(counts[OutcomeError]), st.RenderErrors)
	assert.Equal(t, int64(counts[OutcomeTimeout]), st.RenderTimeouts)
}

func TestOutcomeZeroConfigIsAlwaysDone(t *testing.T) {
	in := mustNew(t, Config{Seed: 9})
	for range 1000 {
		assert.Equal(t, OutcomeDone, in.Outcome("video/avatar"))
	}
	assert.Equal(t, Stats{}, in.Stats())
}

func TestOutcomeRenderFeatures(t *testing.T) {
	cfg := Config{Seed: 5, RenderError: 0.5, RenderTimeout: 0.5, RenderFeatures: []string{"video/avatar"}}
	a := mustNew(t, cfg)
	b := mustNew(t, cfg)
	var seqA, seqB []string
	for i := range 500 {
		// Unlisted features always succeed and draw nothing, so interleaving
		// them leaves the listed feature's sequence unchanged. Names match
		// exactly: the legacy spelling is a different name.
		assert.Equal(t, OutcomeDone, a.Outcome("image/generation"))
		assert.Equal(t, OutcomeDone, a.Outcome("avatar"))
		seqA = append(seqA, a.Outcome("video/avatar"))
		if i%2 == 0 {
			assert.Equal(t, OutcomeDone, b.Outcome("audio/voiceover"))
		}
		seqB = append(seqB, b.Outcome("video/avatar"))
	}
	assert.Equal(t, seqA, seqB)
	assert.NotContains(t, seqA, OutcomeDone, "error and timeout take all the probability")
	st := a.Stats()
	assert.Equal(t, int64(500), st.RenderErrors+st.RenderTimeouts)
}

func TestOutcomeSeeds(t *testing.T) {
	seq := func(seed int64) []string {
		in := mustNew(t, Config{Seed: seed, RenderError: 0.3, RenderTimeout: 0.3})
		out := make([]string, 200)
		for i := range out {
			out[i] = in.Outcome("audio/voiceover")
		}
		return out
	}
	assert.Equal(t, seq(11), seq(11))
	assert.NotEqual(t, seq(11), seq(12))
}

func TestSetConfigKeepsTheStreamForTheSameSeed(t *testing.T) {
	cfg := Config{Seed: 21, RenderError: 0.5}
	straight := mustNew(t, cfg)
	toggled := mustNew(t, cfg)
	var want, got []string
	for i := range 100 {
		want = append(want, straight.Outcome("f"))
		if i == 50 {
			// Off and on again with the same seed: the stream carries on.
			assert.NoError(t, toggled.SetConfig(Config{Seed: 21}))
			assert.Equal(t, OutcomeDone, toggled.Outcome("f"))
			assert.NoError(t, toggled.SetConfig(cfg))
		}
		got = append(got, toggled.Outcome("f"))
	}
	assert.Equal(t, want, got)

	// A new seed starts a new stream, the same as a fresh injector's.
	fresh := mustNew(t, Config{Seed: 99, RenderError: 0.5})
	assert.NoError(t, toggled.SetConfig(Config{Seed: 99, RenderError: 0.5}))
	for range 50 {
		assert.Equal(t, fresh.Outcome("f"), toggled.Outcome("f"))
	}
}
