// Package page is the reference server's page: what one project generated,
// with its outputs shown and played inline, its status updating while
// renders run, its balance, its webhook deliveries with each attempt, and
// the test controls as buttons. `mediagen serve -ui` mounts it under
// [Prefix].
//
// The page shows no project until the browser gives it an API key: asked
// for once and kept in the tab's sessionStorage, the key is sent as the
// Authorization header of the fragment the page's script fetches every
// second; an unknown key gets 401 and the page shows nothing. Everything is
// rendered on the server with html/template; the script only swaps in the
// parts that changed, so a playing video keeps playing.
package page

import (
	"bytes"
	"crypto/rand"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/refserver"
)

// Prefix is the path the page is served under.
const Prefix = "/ui/"

// shown is how many generations the page lists, the newest.
const shown = 50

// IsPath reports whether path belongs to the page, for a server that
// routes it to [Handler].
func IsPath(path string) bool {
	return path == "/ui" || strings.HasPrefix(path, Prefix)
}

// Options configure the page.
type Options struct {
	// TestControl says the test-control API is served beside the page, so
	// the page shows its controls (clock, balance, faults).
	TestControl bool
}

//go:embed shell.html view.html
var files embed.FS

var templates = template.Must(template.New("page").Funcs(template.FuncMap{
	"usd":  usd,
	"when": func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") },
	"ms":   func(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) },
	"secs": func(ms int) string { return fmt.Sprintf("%.1f s", float64(ms)/1000) },
	"add":  func(a, b int) int { return a + b },
}).ParseFS(files, "*.html"))

// Handler serves the page of srv under [Prefix]: the page itself at
// Prefix, and the fragment its script fetches at Prefix+"view".
func Handler(srv *refserver.Server, opts Options) http.Handler {
	p := &page{srv: srv, opts: opts}
	mux := http.NewServeMux()
	mux.Handle("GET /ui", http.RedirectHandler(Prefix, http.StatusMovedPermanently))
	mux.HandleFunc("GET "+Prefix+"{$}", p.shell)
	mux.HandleFunc("GET "+Prefix+"view", p.view)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		mux.ServeHTTP(w, r)
	})
}

type page struct {
	srv  *refserver.Server
	opts Options
}

// shell serves the page, which holds no project's data: the script asks
// for the key and fetches the rest. Its script and style carry a fresh
// nonce that the Content-Security-Policy requires, so nothing injected
// could run.
func (p *page) shell(w http.ResponseWriter, _ *http.Request) {
	nonce := make([]byte, 16)
	_, _ = rand.Read(nonce)
	n := hex.EncodeToString(nonce) // no character that HTML would escape
	w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'nonce-"+n+"'; style-src 'nonce-"+n+
		"'; img-src 'self'; media-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	render(w, "shell.html", struct {
		Nonce       string
		TestControl bool
		Prefix      string
	}{n, p.opts.TestControl, refserver.TestControlPrefix})
}

// view serves the fragment of the project whose key is the Authorization
// header; any other header gets 401 and nothing else.
func (p *page) view(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Security-Policy", "default-src 'none'")
	keys := r.Header.Values("Authorization")
	if len(keys) != 1 || keys[0] == "" {
		http.Error(w, "send the project's API key, alone, in the Authorization header", http.StatusUnauthorized)
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	gens, ok := p.srv.RecentGenerations(keys[0], scheme+"://"+r.Host, shown)
	if !ok {
		http.Error(w, "no project has this API key", http.StatusUnauthorized)
		return
	}
	v := projectView{Balance: p.srv.Balance(keys[0]), Now: p.srv.Now(), TestControl: p.opts.TestControl}
	for _, g := range gens {
		v.Generations = append(v.Generations, generationView{Generation: g, About: about(g)})
	}
	for _, d := range p.srv.Deliveries(keys[0]) {
		v.Deliveries = append(v.Deliveries, newDeliveryView(d))
	}
	render(w, "view.html", v)
}

// render executes a template into a buffer first, so a failure answers 500
// rather than half a page.
func render(w http.ResponseWriter, name string, data any) {
	var buf bytes.Buffer
	if err := templates.ExecuteTemplate(&buf, name, data); err != nil {
		http.Error(w, "page: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}

// projectView is what the fragment shows of one project.
type projectView struct {
	Balance     float64
	Now         time.Time
	TestControl bool
	Generations []generationView
	Deliveries  []deliveryView
}

// generationView is a generation with the words that describe it.
type generationView struct {
	mediagen.Generation
	About string // the prompt or script, shortened
}

// Terminal reports whether the generation has ended.
func (g generationView) Terminal() bool {
	switch g.Status {
	case mediagen.GenerationStatusDone, mediagen.GenerationStatusError, mediagen.GenerationStatusTimeout:
		return true
	}
	return false
}

// about is the text a generation was asked with, for headings and alt
// text: its prompt, else its script.
func about(g mediagen.Generation) string {
	for _, k := range []string{"prompt", "script"} {
		if s, ok := g.Params[k].(string); ok && s != "" {
			if r := []rune(s); len(r) > 120 {
				return string(r[:119]) + "…"
			}
			return s
		}
	}
	return ""
}

// deliveryView is a delivery as the page lists it.
type deliveryView struct {
	refserver.Delivery
	ID    string // unique on the page: the event and its subject
	State string // sending, retrying, delivered or dropped
	Tries []tryView
}

// tryView is one attempt with its error as text.
type tryView struct {
	Timestamp, Signature string
	Status               int
	Err                  string
	Latency              time.Duration
}

func newDeliveryView(d refserver.Delivery) deliveryView {
	v := deliveryView{Delivery: d, ID: "dlv-" + strings.NewReplacer(".", "-", " ", "-").Replace(d.Result.Event+"-"+d.Result.Subject)}
	switch {
	case d.Result.Delivered:
		v.State = "delivered"
	case d.Ended:
		v.State = "dropped"
	case len(d.Result.Tries) > 0:
		v.State = "retrying"
	default:
		v.State = "sending"
	}
	for _, a := range d.Result.Tries {
		t := tryView{Timestamp: a.Timestamp, Signature: a.Signature, Status: a.Status, Latency: a.Latency}
		if a.Err != nil {
			t.Err = a.Err.Error()
		}
		v.Tries = append(v.Tries, t)
	}
	return v
}

// usd formats an amount with cents, and the further digits a charge may
// have (0.0375).
func usd(v float64) string {
	s := fmt.Sprintf("%.4f", v)
	for strings.HasSuffix(s, "0") && len(s)-strings.IndexByte(s, '.') > 3 {
		s = s[:len(s)-1]
	}
	return "$" + s
}
