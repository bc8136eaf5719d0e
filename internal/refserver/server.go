// Package refserver is the reference server of the media generation service:
// an in-memory implementation of every rule of the interface document, with
// the decisions of DESIGN.md, behind the generated strict-server interface of
// internal/api. The client, the upload and poll helpers, the examples and
// users' own tests run against it, so it never spends money or needs the
// network.
//
// One [Server] serves the API under /v3/ and the storage host (signed upload
// and asset URLs) under /storage/ on the same listener. Time comes from an
// injectable [Clock]; render and training durations are realistic at scale 1
// and shrink with [WithRenderScale].
//
// After a request returns, the server does what the service does: it sends
// signed webhook events to the webhookUrl of each generation and voice clone
// ([WithWebhookDelivery]). [WithFaults] breaks it on purpose.
package refserver

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/agent"
	"github.com/mediagen/mediagen-go/internal/refserver/delivery"
	"github.com/mediagen/mediagen-go/internal/refserver/fault"
)

// Body caps: JSON bodies are small; a multipart upload carries at most 10
// files of 30 MiB plus the form's own overhead.
const (
	maxJSONBody      = 1 << 20
	maxFileSize      = 30 << 20 // 31,457,280 bytes: accepted; one more is refused
	maxFilesPerBatch = 10
	maxMultipartBody = maxFilesPerBatch*maxFileSize + 1<<20
)

// Outcome is how a render or a clone's training ends.
type Outcome string

// The outcomes [WithOutcome] can choose.
const (
	OutcomeDone    Outcome = "done"
	OutcomeError   Outcome = "error"
	OutcomeTimeout Outcome = "timeout"
)

// Event reports a generation or a voice clone reaching its first terminal
// state. Generation or Voice is exactly what GET would answer at that moment,
// signed URLs included.
type Event struct {
	Name          string // generation.done, generation.error, generation.timeout, voice.done or voice.error
	ProjectAPIKey string
	WebhookURL    string // as submitted; "" when none was given
	Generation    *mediagen.Generation
	Voice         *mediagen.Voice
}

// Option configures a Server.
type Option func(*Server)

// WithClock makes the server read time from c instead of the wall clock.
func WithClock(c Clock) Option {
	return func(s *Server) { s.clock = c }
}

// WithRenderScale multiplies every render and training duration by f; 0.01
// makes a 45 s video render take under half a second. Values <= 0 are
// ignored.
func WithRenderScale(f float64) Option {
	return func(s *Server) {
		if f > 0 {
			s.scale = f
		}
	}
}

// WithProject adds a project with the given API key and balance in USD. It
// can be repeated; [Server.Project] returns its webhook secret.
func WithProject(apiKey string, balance float64) Option {
	return func(s *Server) { s.initial = append(s.initial, initialProject{apiKey, balance}) }
}

// WithAllowHTTPWebhooks also accepts, for local tests, a webhookUrl whose
// host is loopback (localhost, 127.0.0.0/8, ::1), over http or https; the
// command's flag is -allow-http-webhooks, and clienttest always sets it.
// Otherwise the server does as the service does: a webhookUrl must be https
// and publicly reachable, and anything else answers 400 invalid_argument.
func WithAllowHTTPWebhooks() Option {
	return func(s *Server) { s.allowHTTPWebhooks = true }
}

// WithOutcome decides how each render or clone training ends; the default is
// always [OutcomeDone]. fn is called once per submission, with the canonical
// feature, or feature.VoiceClone for clones. It wins over the render faults
// of [WithFaults], which then only affect HTTP answers.
func WithOutcome(fn func(feature string) Outcome) Option {
	return func(s *Server) { s.outcome = fn }
}

// WithEventSink receives an [Event] for every generation and voice clone
// reaching its first terminal state, whether or not it has a webhook URL.
// fn is called from one dispatching goroutine, in order, never under the
// server's lock and never on a request's path; deleted generations emit
// nothing. It only observes: webhooks are delivered either way.
func WithEventSink(fn func(Event)) Option {
	return func(s *Server) { s.sink = fn }
}

// WithFaults injects the faults of cfg (see package fault): HTTP faults on
// the API, and render outcomes unless [WithOutcome] is also given. A zero
// cfg injects nothing until [Server.Faults] is switched with SetConfig.
// An invalid cfg makes New panic with the reasons, as http.Handle does with
// a bad pattern: it is a programming error in the test, not a runtime
// condition.
func WithFaults(cfg fault.Config) Option {
	return func(s *Server) {
		in, err := fault.New(cfg)
		if err != nil {
			panic("refserver: WithFaults: " + err.Error())
		}
		s.faults = in
	}
}

type initialProject struct {
	key     string
	balance float64
}

// Server is the reference server. Create it with [New]; it is an
// [http.Handler] and safe for concurrent use. Call [Server.Close] to stop its
// background work.
type Server struct {
	clock             Clock
	scale             float64
	allowHTTPWebhooks bool
	outcome           func(string) Outcome
	sink              func(Event)
	retired           retiredVoices
	initial           []initialProject
	signKey           []byte
	macs              sync.Pool // of *signer, keyed with signKey
	faults            *fault.Injector
	deliveryOpts      delivery.Options
	noDelivery        bool
	sender            *delivery.Sender
	deliveries        deliveryLog  // what the sender did, for Deliveries
	handler           http.Handler // serve, behind the fault injector

	mu        sync.Mutex
	projects  map[string]*project        // by API key
	gens      map[string]*generation     // by id, deleted in-flight ones included
	files     map[string]*file           // by id, reserved and live
	clones    map[string]*clone          // by id
	training  map[*clone]struct{}        // clones still training, at most maxTraining
	favorites map[string]map[string]bool // project id -> catalog voice id
	pending   map[string]bool            // generation id -> its queued event is still wanted
	seq       uint64
	timers    timers // the next transition of every row that has one

	events *eventQueue
	mux    *http.ServeMux
	agent  http.Handler

	stop      chan struct{}
	stopped   chan struct{}
	closeOnce sync.Once
}

// New returns a running Server. Without [WithProject] it has no project;
// add them with [Server.AddProject]. Webhook deliveries are on.
func New(opts ...Option) *Server {
	s := &Server{
		clock:     realClock{},
		scale:     1,
		signKey:   []byte(randomHex(32)),
		projects:  map[string]*project{},
		gens:      map[string]*generation{},
		files:     map[string]*file{},
		clones:    map[string]*clone{},
		training:  map[*clone]struct{}{},
		favorites: map[string]map[string]bool{},
		pending:   map[string]bool{},
		stop:      make(chan struct{}),
		stopped:   make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	for _, p := range s.initial {
		s.AddProject(p.key, p.balance)
	}
	if s.outcome == nil {
		in := s.faults // nil injects nothing
		s.outcome = func(feature string) Outcome { return Outcome(in.Outcome(feature)) }
	}
	s.sender = s.newSender()
	if s.sender != nil || s.sink != nil {
		s.events = newEventQueue(s.dispatch)
	} else {
		s.events = newEventQueue(nil)
	}

	s.mux = http.NewServeMux()
	strict := api.NewStrictHandlerWithOptions(s, []api.StrictMiddlewareFunc{storeRequest}, api.StrictHTTPServerOptions{
		RequestErrorHandlerFunc:  requestError,
		ResponseErrorHandlerFunc: func(w http.ResponseWriter, _ *http.Request, err error) { writeError(w, err) },
	})
	api.HandlerWithOptions(strict, api.StdHTTPServerOptions{
		BaseRouter:       s.mux,
		ErrorHandlerFunc: parameterError,
	})
	s.agent = agent.New(s)
	s.handler = s.faults.Wrap(http.HandlerFunc(s.serve))

	go s.tick()
	return s
}

// Close stops the background ticker and the event dispatcher, starts the
// deliveries of events already queued, then abandons pending retries and
// cuts attempts in flight short; it returns once no delivery goroutine is
// left. Requests still served after Close keep working, settling lazily,
// but send no more webhooks.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.stopped
		s.events.close()
		if s.sender != nil {
			s.sender.Close()
		}
	})
}

// Faults returns the fault injector of [WithFaults], whose SetConfig
// switches faults at run time; nil when the server was built without it.
func (s *Server) Faults() *fault.Injector { return s.faults }

// ServeHTTP serves the API under /v3/ and the storage host under /storage/.
// Absolute URLs in answers (upload URLs, outputs, previews) are built from
// the request's scheme and Host. Faults of [WithFaults] apply here.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The Date header tells clients the server's time (the client's search
	// for a generation a lost answer created starts from it), so it must come
	// from the server's clock, fake or not, as the service's does.
	w.Header().Set("Date", s.clock.Now().UTC().Format(http.TimeFormat))
	s.handler.ServeHTTP(w, r)
}

// serve routes a request that the fault injector let through.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/storage/"):
		s.serveStorage(w, r)
	case p == "/v3" || strings.HasPrefix(p, "/v3/"):
		s.serveAPI(w, r)
	default:
		writeError(w, notFoundf("no route %s %s", r.Method, p))
	}
}

// serveAPI authenticates, caps the body and routes an API request.
func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	s.settle()
	p, aerr := s.authenticate(r)
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	limit := int64(maxJSONBody)
	if r.URL.Path == "/v3/files/upload" {
		limit = maxMultipartBody
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	ctx := context.WithValue(r.Context(), projectKey{}, p)
	ctx = context.WithValue(ctx, baseKey{}, baseURL(r))
	r = r.WithContext(ctx)

	h, pattern := s.mux.Handler(r)
	if pattern == "" {
		writeNoRoute(w, r, h)
		return
	}
	if aerr := bufferJSONBody(r); aerr != nil {
		writeError(w, aerr)
		return
	}
	if aerr := checkUploadType(r); aerr != nil {
		writeError(w, aerr)
		return
	}
	clampPageSize(r)
	// Served through the mux, not h, so that path values are set.
	s.mux.ServeHTTP(w, r)
}

// baseURL is the scheme and host the caller reached the server at.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

type (
	projectKey struct{}
	baseKey    struct{}
	requestKey struct{}
)

// storeRequest keeps the incoming request in the context for CallAgent,
// which replays it to the agent handler.
func storeRequest(f api.StrictHandlerFunc, _ string) api.StrictHandlerFunc {
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request, req any) (any, error) {
		return f(context.WithValue(ctx, requestKey{}, r), w, r, req)
	}
}

// tick settles the server in real time until Close.
func (s *Server) tick() {
	defer close(s.stopped)
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
			s.settle()
		}
	}
}

// writeNoRoute answers a request no pattern of a mux matched, given the
// handler the mux chose for it: the mux answers unknown paths and wrong
// methods in text, so find out which it is and answer in JSON instead.
func writeNoRoute(w http.ResponseWriter, r *http.Request, h http.Handler) {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	if rec.Code == http.StatusMethodNotAllowed {
		if allow := rec.Header().Get("Allow"); allow != "" {
			w.Header().Set("Allow", allow)
		}
		writeError(w, newError(http.StatusMethodNotAllowed, api.ErrorCodeMethodNotAllowed, "method %s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	writeError(w, notFoundf("no route %s %s", r.Method, r.URL.Path))
}
