package fault

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	good := []Config{
		{},
		{Seed: -5, RenderError: 0.5, RenderTimeout: 0.5},
		{HTTPStatus: 0.7, DropBefore: 0.2, DropAfter: 0.1},
		{HTTPStatus: 1, Statuses: []int{400, 429, 599}, RetryAfter: time.Second},
		{Latency: time.Second, Paths: []string{"/storage/"}, Methods: []string{"GET"}, RenderFeatures: []string{"video/avatar"}},
	}
	for _, c := range good {
		assert.NoError(t, c.Validate(), "%+v", c)
	}

	bad := map[string]Config{
		"negative probability":  {RenderError: -0.1},
		"probability above one": {DropAfter: 1.5},
		"NaN probability":       {HTTPStatus: math.NaN()},
		"render sum above one":  {RenderError: 0.6, RenderTimeout: 0.6},
		"http sum above one":    {HTTPStatus: 0.5, DropBefore: 0.3, DropAfter: 0.3},
		"success status":        {Statuses: []int{200}},
		"status out of range":   {Statuses: []int{600}},
		"negative retry after":  {RetryAfter: -time.Second},
		"negative latency":      {Latency: -time.Millisecond},
		"relative path":         {Paths: []string{"v3/"}},
		"empty method":          {Methods: []string{""}},
		"method with space":     {Methods: []string{"GET POST"}},
		"empty render feature":  {RenderFeatures: []string{""}},
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			require.Error(t, c.Validate())
			in, err := New(c)
			require.Error(t, err)
			assert.Nil(t, in)
		})
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	err := Config{RenderError: 2, Statuses: []int{302}}.Validate()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "RenderError")
	assert.Contains(t, err.Error(), "302")
}

func TestParseStatuses(t *testing.T) {
	got, err := ParseStatuses("500, 502,429")
	require.NoError(t, err)
	assert.Equal(t, []int{500, 502, 429}, got)

	got, err = ParseStatuses("  ")
	require.NoError(t, err)
	assert.Nil(t, got)

	for _, s := range []string{"500,", "abc", "200", "500,700", "5 00"} {
		_, err := ParseStatuses(s)
		assert.Error(t, err, s)
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int64{
		0:                       1,
		time.Millisecond:        1,
		time.Second:             1,
		1001 * time.Millisecond: 2,
		90 * time.Second:        90,
	} {
		assert.Equal(t, want, Config{RetryAfter: d}.retryAfterSeconds(), d)
	}
}
