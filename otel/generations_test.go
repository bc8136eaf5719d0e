package otel_test

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/hub"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/webhook"
)

// TestGenerationsWaitTraces: one poll.Generations wait on several
// generations gives each job its own wait span, with check events and
// ended_by, and each job span ends with ended_by; no span is an orphan.
// Fed by a hub, the generations whose events came first end by webhook.
func TestGenerationsWaitTraces(t *testing.T) {
	for _, withHub := range []bool{false, true} {
		t.Run(fmt.Sprintf("hub=%v", withHub), func(t *testing.T) {
			rec := newRecorder(t)
			srv := clienttest.NewServer(t, clienttest.WithOutcome(func(f mediagen.Feature) clienttest.Outcome {
				if f == mediagen.FeatureAudioVoiceover || f == mediagen.FeatureLegacyVoiceover {
					return clienttest.OutcomeError // a failed job ends its wait too
				}
				return clienttest.OutcomeDone
			}))
			opts := []client.Option{client.WithTracerProvider(rec.tp), client.WithMeterProvider(rec.mp)}
			var waitOpts []poll.Option
			if withHub {
				h, err := hub.New()
				require.NoError(t, err)
				receiver, err := webhook.Handler(srv.WebhookSecret(), h.Deliver, webhook.WithNow(srv.Now))
				require.NoError(t, err)
				hs := httptest.NewServer(receiver)
				t.Cleanup(hs.Close)
				opts = append(opts, client.WithWebhookURL(hs.URL))
				waitOpts = append(waitOpts, poll.WithHub(h))
			}
			c := srv.Client(opts...)

			var ids []string
			create := func(args client.Args) {
				g, err := c.CreateGeneration(t.Context(), args)
				require.NoError(t, err)
				ids = append(ids, g.ID)
			}
			for i := range 3 {
				create(client.ImageGenerationArgs{Prompt: fmt.Sprintf("a lighthouse, take %d", i)})
			}
			early := len(ids) // ended, their events delivered, before the wait
			srv.Advance(time.Minute)
			srv.WaitDeliveries()
			for i := range 3 {
				create(client.ImageGenerationArgs{Prompt: fmt.Sprintf("a harbour, take %d", i)})
			}
			create(client.VoiceoverArgs{VoiceID: "ava-warm-narrator", Script: "Take one."})

			results, err := poll.Generations(t.Context(), c, append(ids, ids[0]), waitOpts...)
			require.Error(t, err, "the voiceover failed")
			require.Len(t, results, len(ids)+1)

			spans := rec.spans.GetSpans()
			byID := map[trace.SpanID]tracetest.SpanStub{}
			for _, s := range spans {
				byID[s.SpanContext.SpanID()] = s
			}
			jobs := map[string]tracetest.SpanStub{}
			waits := map[string][]tracetest.SpanStub{}
			for _, s := range spans {
				if s.Parent.IsValid() {
					p, ok := byID[s.Parent.SpanID()]
					if assert.True(t, ok, "orphan span %s", s.Name) {
						assert.Equal(t, p.SpanContext.TraceID(), s.SpanContext.TraceID())
					}
				}
				id, _ := attr(s, "mediagen.generation.id")
				switch s.Name {
				case "mediagen.generation":
					assert.False(t, s.Parent.IsValid(), "the job is its trace's root")
					jobs[id.AsString()] = s
				case "mediagen.wait":
					waits[id.AsString()] = append(waits[id.AsString()], s)
				}
			}
			endedBy := map[string]int64{}
			for i, id := range ids {
				job, ok := jobs[id]
				require.True(t, ok, "no job span for %s", id)
				by, ok := attr(job, "mediagen.wait.ended_by")
				require.True(t, ok, "%s: the job has no ended_by", id)
				st, _ := attr(job, "mediagen.status")
				assert.NotEmpty(t, st.AsString())
				require.Len(t, waits[id], 1, "one wait span per generation, a repeated id included")
				w := waits[id][0]
				assert.Equal(t, job.SpanContext.SpanID(), w.Parent.SpanID(), "the wait is the job's child")
				wby, _ := attr(w, "mediagen.wait.ended_by")
				assert.Equal(t, by.AsString(), wby.AsString())
				endedBy[by.AsString()]++
				if by.AsString() == "poll" {
					require.NotEmpty(t, w.Events, "%s: a polled wait has check events", id)
					last := w.Events[len(w.Events)-1]
					assert.Equal(t, "check", last.Name)
					assert.Contains(t, last.Attributes, attribute.Bool("mediagen.terminal", true))
				}
				if withHub && i < early {
					assert.Equal(t, "webhook", by.AsString(), "%s: its event came before the wait", id)
				}
			}
			if !withHub {
				assert.Equal(t, int64(len(ids)), endedBy["poll"])
			}
			m := rec.metrics(t)
			for by, n := range endedBy {
				assert.Equal(t, n, sumInt(m["mediagen.waits"], attribute.String("mediagen.wait.ended_by", by)), by)
			}
			assert.Equal(t, int64(len(ids)), sumInt(m["mediagen.waits"]))
			noSecret(t, spans, []string{srv.APIKey(), srv.WebhookSecret()})
		})
	}
}
