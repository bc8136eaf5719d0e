package telemetry

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// span is a recording span that keeps its events and whether it ended.
type span struct {
	noop.Span
	mu     sync.Mutex
	ended  bool
	events []string
}

func (s *span) IsRecording() bool { return true }
func (s *span) End(...trace.SpanEndOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
}
func (s *span) AddEvent(name string, _ ...trace.EventOption) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, name)
}

// At most maxJobs jobs stay open; the oldest beyond them end, and so are
// exported, as untracked. The ids of finished jobs do not pile up.
func TestOpenJobsBounded(t *testing.T) {
	t.Cleanup(func() {
		jobs.Lock()
		jobs.m, jobs.order = map[string]*Job{}, nil
		jobs.Unlock()
	})
	open := func(id string) (*Job, *span) {
		sp := &span{}
		j := &Job{span: sp, feature: "image/generate"}
		j.Created(id, "image", 0.04, nil)
		return j, sp
	}
	var first []*span
	for i := range maxJobs + 3 {
		_, sp := open(fmt.Sprintf("gen_%d", i))
		if i < 4 {
			first = append(first, sp)
		}
	}
	jobs.Lock()
	assert.Equal(t, maxJobs, len(jobs.m))
	jobs.Unlock()
	for i, sp := range first[:3] {
		assert.True(t, sp.ended, "job %d ended", i)
		assert.Equal(t, []string{"untracked"}, sp.events)
		assert.Nil(t, Lookup(fmt.Sprintf("gen_%d", i)))
	}
	assert.False(t, first[3].ended, "the fourth is still open")
	require.NotNil(t, Lookup("gen_3"))

	for i := range 3 * maxJobs {
		j, _ := open(fmt.Sprintf("done_%d", i))
		j.Finish("done", false, "poll")
	}
	jobs.Lock()
	defer jobs.Unlock()
	// Each new job pushed the oldest open one out before it finished.
	assert.Equal(t, maxJobs-1, len(jobs.m), "finished jobs leave; the open ones stay")
	assert.LessOrEqual(t, len(jobs.order), 2*maxJobs, "the ids of finished jobs are dropped")
}
