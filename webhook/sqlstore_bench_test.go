package webhook_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/webhook"
)

// BenchmarkHandlerStore measures Handler taking fresh deliveries with each
// store: ns/op is the time per delivery, so the SQL sides minus memory is
// the latency a shared store adds. serial takes one delivery at a time;
// parallel has 16 in flight and reports deliveries/s. The sides run as
// sub-benchmarks, so -count interleaves them and a slow moment of the
// machine falls on all of them:
//
//	go test -run '^$' -bench HandlerStore -count 8 ./webhook/
//
// The request goes straight to ServeHTTP, without a socket, so that what
// differs between the sides is the store. The test databases skip the flush
// to disk at each commit unless MEDIAGEN_DB_DURABLE is set.
func BenchmarkHandlerStore(b *testing.B) {
	sides := []struct {
		name  string
		store func(*testing.B) webhook.Store
	}{
		{"memory", func(*testing.B) webhook.Store { return webhook.NewMemoryStore(webhook.DefaultStoreSize) }},
		{"sqlite", func(b *testing.B) webhook.Store { return benchSQLStore(b, engines[0]) }},
		{"postgres", func(b *testing.B) webhook.Store { return benchSQLStore(b, engines[1]) }},
	}
	for _, mode := range []string{"serial", "parallel"} {
		for _, side := range sides {
			b.Run(mode+"/"+side.name, func(b *testing.B) {
				h := handlerOf(b, handlerSecret, func(context.Context, *webhook.Event) error { return nil },
					webhook.WithStore(side.store(b)),
					webhook.WithErrorFunc(func(_ context.Context, _ *webhook.Event, err error) { b.Error(err) }))
				bodies, headers := benchDeliveries(b.N)
				var next atomic.Int64
				deliver := func() {
					i := next.Add(1) - 1
					req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(bodies[i]))
					req.Header = headers[i].Clone()
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Errorf("answered %d", rec.Code)
					}
				}
				b.ResetTimer()
				start := time.Now()
				if mode == "serial" {
					for range b.N {
						deliver()
					}
				} else {
					b.SetParallelism(8) // 8 per core: 16 deliveries in flight
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							deliver()
						}
					})
				}
				b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
			})
		}
	}
}

var benchRun atomic.Int64

// benchDeliveries returns n signed events, each of an id no run has used
// before; signing is the service's work, so it is done before timing.
func benchDeliveries(n int) ([][]byte, []http.Header) {
	run := benchRun.Add(1)
	sentAt := time.Now()
	bodies, headers := make([][]byte, n), make([]http.Header, n)
	for i := range bodies {
		bodies[i] = generationBody(webhook.EventGenerationDone, fmt.Sprintf("gen_%d_%d", run, i))
		headers[i] = http.Header{}
		webhook.SetHeaders(headers[i], []string{handlerSecret}, sentAt, bodies[i])
	}
	return bodies, headers
}

// benchSQLStore is a store over a new database, with the connection pool a
// receiver of that engine would use.
func benchSQLStore(b *testing.B, e engine) webhook.Store {
	db := e.open(b, e.database(b))
	if e.dialect == mediagen.SQLite {
		// One writer at a time anyway: waiting in the pool costs less than
		// SQLite's busy handler, which sleeps.
		db.SetMaxOpenConns(1)
	}
	return e.store(b, db)
}
