package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"time"
)

// floorKey is the floor server's only API key.
const floorKey = "floor-key"

// floor is the least a Go server can do for the requests refload sends:
// decode the JSON body, keep the generation in a map under one lock, and
// encode it back, on net/http and encoding/json. Generations are done at
// once and never expire. Its figures are the floor the reference server is
// compared with.
type floor struct {
	mu    sync.Mutex
	gens  map[string]*floorGen
	order []*floorGen // oldest first; a cursor is a position in it
	seq   uint64
}

// floorGen has the fields of a generation, in the order the reference
// server encodes them.
type floorGen struct {
	BalanceUsed float64        `json:"balanceUsed"`
	ExpiresAt   time.Time      `json:"expiresAt"`
	Feature     string         `json:"feature"`
	ID          string         `json:"id"`
	Kind        string         `json:"kind"`
	Output      floorOutput    `json:"output"`
	Params      map[string]any `json:"params"`
	ProjectID   string         `json:"projectId"`
	RequestDate time.Time      `json:"requestDate"`
	Status      string         `json:"status"`
}

type floorOutput struct {
	Image string `json:"image"`
	Mime  string `json:"mime"`
}

func newFloor() *floor { return &floor{gens: map[string]*floorGen{}} }

// handler routes the floor's endpoints, and /debug/heap as the reference
// server's debug listener does.
func (f *floor) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v3/generations", f.authed(f.create))
	mux.HandleFunc("GET /v3/generations/{id}", f.authed(f.get))
	mux.HandleFunc("GET /v3/generations", f.authed(f.list))
	mux.HandleFunc("GET /debug/heap", heapHandler)
	return mux
}

func (f *floor) authed(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != floorKey {
			http.Error(w, `{"error":{"code":"unauthorized","message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		h(w, r)
	}
}

func (f *floor) create(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Feature string         `json:"feature"`
		Args    map[string]any `json:"args"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil || req.Feature == "" || req.Args == nil {
		http.Error(w, `{"error":{"code":"invalid_argument","message":"bad body"}}`, http.StatusBadRequest)
		return
	}
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	now := time.Now().UTC()
	f.mu.Lock()
	f.seq++
	g := &floorGen{
		BalanceUsed: 0.04, ExpiresAt: now.Add(24 * time.Hour), Feature: req.Feature,
		ID: fmt.Sprintf("gen_%012x%s", f.seq, hex.EncodeToString(b)), Kind: "image",
		Params: req.Args, ProjectID: "proj_floor", RequestDate: now, Status: "done",
	}
	g.Output = floorOutput{Image: "http://" + r.Host + "/storage/generations/" + g.ID + "/output.png", Mime: "image/png"}
	f.gens[g.ID] = g
	f.order = append(f.order, g)
	out := *g
	f.mu.Unlock()
	writeJSON(w, map[string]any{"generation": &out})
}

func (f *floor) get(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	g, ok := f.gens[r.PathValue("id")]
	var out floorGen
	if ok {
		out = *g
	}
	f.mu.Unlock()
	if !ok {
		http.Error(w, `{"error":{"code":"not_found","message":"no such generation"}}`, http.StatusNotFound)
		return
	}
	writeJSON(w, map[string]any{"generation": &out})
}

func (f *floor) list(w http.ResponseWriter, r *http.Request) {
	limit := 24
	if v, err := strconv.Atoi(r.URL.Query().Get("limit")); err == nil && v >= 1 {
		limit = min(v, 100)
	}
	f.mu.Lock()
	end := len(f.order)
	if c := r.URL.Query().Get("cursor"); c != "" {
		v, err := strconv.Atoi(c)
		if err != nil || v < 0 || v > end {
			f.mu.Unlock()
			http.Error(w, `{"error":{"code":"invalid_argument","message":"bad cursor"}}`, http.StatusBadRequest)
			return
		}
		end = v
	}
	page := make([]floorGen, 0, min(limit, end))
	for i := end - 1; i >= 0 && len(page) < limit; i-- {
		page = append(page, *f.order[i])
	}
	f.mu.Unlock()
	var next *string
	if rest := end - len(page); rest > 0 {
		c := strconv.Itoa(rest)
		next = &c
	}
	writeJSON(w, map[string]any{"generations": page, "nextCursor": next})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// heapHandler answers the live heap after a collection, as
// internal/cmd/refserver's debug listener does.
func heapHandler(w http.ResponseWriter, _ *http.Request) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	writeJSON(w, map[string]uint64{"heapAlloc": m.HeapAlloc})
}

// serveFloor serves the floor on addr, a loopback address, until ctx is
// done, after printing its base URL, key and debug URL as
// internal/cmd/refserver prints its own.
func serveFloor(ctx context.Context, addr string, stdout io.Writer) error {
	if err := checkLoopback("http://" + addr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, "MEDIAGEN_BASE_URL=%s\nMEDIAGEN_API_KEY=%s\nMEDIAGEN_DEBUG_URL=%s\n", base, floorKey, base)
	hs := &http.Server{Handler: newFloor().handler(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return hs.Shutdown(shutdown)
}
