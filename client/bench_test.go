package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/benchpair"
)

// The client's cost is measured against the floor: the same request made
// with net/http and decoded with encoding/json, the two sides alternating
// inside one benchmark (see internal/benchpair). scripts/benchpairs.sh runs
// them; BENCHMARKS.md has the figures.
//
// Each pair runs over three transports, the same for both sides:
//
//   - refserver: the in-process reference server over loopback. Its own
//     work, counted on both sides, is most of each figure.
//   - loopback: a minimal server over loopback that answers the reference
//     server's bodies, recorded once, with next to no work of its own.
//   - inmem: no server and no socket: a transport that hands back the
//     recorded bodies. Every allocation counted is the client's.

// cannedBodies are answers recorded from the reference server.
type cannedBodies struct {
	id         string // of the recorded generation
	generation []byte // GET /v3/generations/{id}: a generation envelope
	page       []byte // GET /v3/generations?limit=24: a page of 24
}

// benchPage is the page size of the list benchmarks.
const benchPage = 24

// recordBodies fills a reference server with 31 generations and records
// the answers the canned transports give.
func recordBodies(b *testing.B, srv *clienttest.Server) cannedBodies {
	c := srv.Client()
	ctx := context.Background()
	g, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "a lighthouse at dusk"})
	require.NoError(b, err)
	for range 30 {
		_, err := c.CreateGeneration(ctx, client.ImageGenerationArgs{Prompt: "filler"})
		require.NoError(b, err)
	}
	hc := &http.Client{Transport: loopback(b)}
	get := func(path string) []byte {
		req, err := http.NewRequest(http.MethodGet, srv.URL()+path, nil)
		require.NoError(b, err)
		req.Header.Set("Authorization", srv.APIKey())
		resp, err := hc.Do(req)
		require.NoError(b, err)
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		require.NoError(b, err)
		require.Equal(b, http.StatusOK, resp.StatusCode, string(body))
		return body
	}
	return cannedBodies{
		id:         g.ID,
		generation: get("/v3/generations/" + g.ID),
		page:       get("/v3/generations?limit=" + strconv.Itoa(benchPage)),
	}
}

// cannedHandler answers as the reference server did: the recorded
// generation to a GET of any id, the recorded page to a list, and to a
// create the recorded generation under a new id, so that every create hands
// out a row of its own.
type cannedHandler struct {
	bodies  cannedBodies
	created atomic.Int64
}

func (h *cannedHandler) answer(method, path string, body io.Reader) (int, []byte) {
	switch {
	case method == http.MethodGet && path == "/v3/generations":
		return http.StatusOK, h.bodies.page
	case method == http.MethodGet && strings.HasPrefix(path, "/v3/generations/"):
		return http.StatusOK, h.bodies.generation
	case method == http.MethodPost && path == "/v3/generations":
		_, _ = io.Copy(io.Discard, body)
		id := "gen_bench" + strconv.FormatInt(h.created.Add(1), 10)
		return http.StatusCreated, bytes.Replace(h.bodies.generation, []byte(h.bodies.id), []byte(id), 1)
	}
	return http.StatusNotFound, []byte(`{"error":{"code":"not_found","message":"no route"}}`)
}

func (h *cannedHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, body := h.answer(r.Method, r.URL.Path, r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// RoundTrip answers in memory, as ServeHTTP would over a socket.
func (h *cannedHandler) RoundTrip(r *http.Request) (*http.Response, error) {
	var in io.Reader = http.NoBody
	if r.Body != nil {
		in = r.Body
		defer r.Body.Close()
	}
	status, body := h.answer(r.Method, r.URL.Path, in)
	return &http.Response{
		Status:        strconv.Itoa(status) + " " + http.StatusText(status),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": {"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}, nil
}

// pairTarget is where both sides of a pair send their requests.
type pairTarget struct {
	url, key string
	hc       *http.Client // the raw side's client; the SDK's wraps its transport
	id       string       // a generation that exists there
	c        *client.Client
}

// pairTargets returns the three transports of the file comment.
func pairTargets(b *testing.B) map[string]pairTarget {
	srv := clienttest.NewServer(b)
	bodies := recordBodies(b, srv)
	canned := &cannedHandler{bodies: bodies}
	hs := httptest.NewServer(canned)
	b.Cleanup(hs.Close)
	targets := map[string]pairTarget{
		"refserver": {url: srv.URL(), hc: &http.Client{Transport: loopback(b)}},
		"loopback":  {url: hs.URL, hc: hs.Client()},
		"inmem":     {url: "http://canned.invalid", hc: &http.Client{Transport: canned}},
	}
	for name, t := range targets {
		t.key, t.id = srv.APIKey(), bodies.id
		c, err := client.New(t.key, client.WithBaseURL(t.url), client.WithHTTPClient(t.hc))
		require.NoError(b, err)
		t.c = c
		targets[name] = t
	}
	return targets
}

// runPairs runs one pair per transport; sides returns the SDK's side and
// the raw one for a target.
func runPairs(b *testing.B, only []string, sides func(t pairTarget) (sdk, raw func(*testing.B))) {
	targets := pairTargets(b)
	for _, name := range only {
		t := targets[name]
		b.Run(name, func(b *testing.B) {
			sdk, raw := sides(t)
			benchpair.Run(b, [2]benchpair.Side{{Name: "sdk", Run: sdk}, {Name: "raw", Run: raw}})
		})
	}
}

var allTargets = []string{"refserver", "loopback", "inmem"}

// BenchmarkPairGetGeneration compares Client.GetGeneration with a GET
// decoded by encoding/json.
func BenchmarkPairGetGeneration(b *testing.B) {
	ctx := context.Background()
	runPairs(b, allTargets, func(t pairTarget) (sdk, raw func(*testing.B)) {
		sdk = func(b *testing.B) {
			if _, err := t.c.GetGeneration(ctx, t.id); err != nil {
				b.Fatal(err)
			}
		}
		raw = func(b *testing.B) {
			var env struct{ Generation mediagen.Generation }
			rawDo(b, t.hc, http.MethodGet, t.url+"/v3/generations/"+t.id, t.key, nil, http.StatusOK, &env)
		}
		return sdk, raw
	})
}

// BenchmarkPairListGenerations compares Client.ListGenerations with a GET
// of the same page decoded by encoding/json.
func BenchmarkPairListGenerations(b *testing.B) {
	ctx := context.Background()
	runPairs(b, allTargets, func(t pairTarget) (sdk, raw func(*testing.B)) {
		url := t.url + "/v3/generations?limit=" + strconv.Itoa(benchPage)
		sdk = func(b *testing.B) {
			if _, err := t.c.ListGenerations(ctx, client.ListParams{Limit: benchPage}); err != nil {
				b.Fatal(err)
			}
		}
		raw = func(b *testing.B) {
			var page struct {
				Generations []mediagen.Generation
				NextCursor  *string
			}
			rawDo(b, t.hc, http.MethodGet, url, t.key, nil, http.StatusOK, &page)
		}
		return sdk, raw
	})
}

// BenchmarkPairCreateGeneration compares Client.CreateGeneration with a POST
// of the same arguments, encoded and decoded by encoding/json. Not against
// the reference server, whose cost grows with the generations it holds.
func BenchmarkPairCreateGeneration(b *testing.B) {
	ctx := context.Background()
	args := client.ImageGenerationArgs{Prompt: "a lighthouse at dusk", AspectRatio: client.Aspect16x9}
	runPairs(b, []string{"loopback", "inmem"}, func(t pairTarget) (sdk, raw func(*testing.B)) {
		url := t.url + "/v3/generations"
		sdk = func(b *testing.B) {
			if _, err := t.c.CreateGeneration(ctx, args); err != nil {
				b.Fatal(err)
			}
		}
		raw = func(b *testing.B) {
			body, err := json.Marshal(struct {
				Feature mediagen.Feature           `json:"feature"`
				Args    client.ImageGenerationArgs `json:"args"`
			}{mediagen.FeatureImageGeneration, args})
			if err != nil {
				b.Fatal(err)
			}
			var env struct{ Generation mediagen.Generation }
			rawDo(b, t.hc, http.MethodPost, url, t.key, body, http.StatusCreated, &env)
		}
		return sdk, raw
	})
}

// rawDo is the floor: one request with net/http, its answer decoded by
// encoding/json into into.
func rawDo(b *testing.B, hc *http.Client, method, url, key string, body []byte, want int, into any) {
	var in io.Reader
	if body != nil {
		in = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, in)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		b.Fatalf("status %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		b.Fatal(err)
	}
}
