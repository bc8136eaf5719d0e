package telemetry

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// With no provider set (the global placeholders), no helper allocates:
// the README promises that tracing off costs nothing.
func TestOffAllocatesNothing(t *testing.T) {
	ctx := context.Background()
	tel := &T{}
	u, err := url.Parse("https://api.example.com/v3/generations/gen_1?sig=secret")
	assert.NoError(t, err)
	resp, failed := &http.Response{StatusCode: http.StatusOK}, errors.New("dropped")
	for name, f := range map[string]func(){
		"job": func() {
			_, j := tel.StartJob(ctx, "image/generation", "", "order-1")
			j.Created("gen_1", "image", 0.04, nil)
		},
		"attempt": func() {
			actx, a := tel.StartAttempt(ctx, http.MethodGet, u, 0)
			a.End(resp, nil)
			tel.Retry(actx, failed, 1)
		},
		"search": func() {
			_, s := StartSearch(ctx)
			s.EndSearch(true, nil)
		},
		"wait": func() {
			_, w := tel.StartWait(ctx, "gen_1")
			w.Check(true)
			w.End(false)
			w.Close(failed)
		},
		"save": func() {
			_, s := tel.StartSave(ctx, "gen_1")
			s.EndSave(nil)
		},
		"observe": func() { tel.Observe(ctx, "gen_1", "image/generation", "image", "done", 0.04, time.Time{}) },
		"hub": func() {
			Delivered(ctx, "gen_1", "")
			Delivery(ctx, "refused")
			Exchanged("gen_1", "")
			Watched("gen_1")
			Release("gen_1")
		},
	} {
		assert.Zero(t, testing.AllocsPerRun(100, f), name)
	}
}
