package serve

import (
	"fmt"
	"net/http"
	"net/http/pprof"
	"runtime"
)

// debugHandler serves the profiles of net/http/pprof and /debug/heap, the
// live heap in bytes after a collection, as {"heapAlloc": N}.
func debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.HandleFunc("/debug/heap", func(w http.ResponseWriter, _ *http.Request) {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, "{\"heapAlloc\":%d}\n", m.HeapAlloc)
	})
	return mux
}
