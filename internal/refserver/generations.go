package refserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"sort"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/api/model"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// Retention and paging rules of the interface document, and render times at
// scale 1 (realistic, so that polling code meets realistic waits).
const (
	retention        = 24 * time.Hour
	defaultPageSize  = 24
	maxPageSize      = 100
	pendingShare     = 0.1 // share of a render spent pending before running
	imageRender      = 8 * time.Second
	textRender       = 4 * time.Second
	audioRenderBase  = 12 * time.Second
	audioRenderCap   = 60 * time.Second
	videoRenderBase  = 45 * time.Second
	videoRenderPerS  = 2 * time.Second
	renderFailedMsg  = "render failed; the charge was refunded, so retrying is safe"
	renderTimeoutMsg = "render timed out; the charge was refunded, so retrying is safe"
)

// generation is the server's record of one generation.
type generation struct {
	id         string
	projectID  string
	projectKey string
	feature    string // as submitted, canonical or legacy
	canonical  string
	kind       string
	params     map[string]any
	charge     int64
	webhookURL string
	base       string // scheme and host of the creating request, for events
	out        outputSpec

	requestDate time.Time
	runningAt   time.Time
	endAt       time.Time
	expiresAt   time.Time
	outcome     Outcome

	// Once terminal, the generation ended at endAt: that is its responseDate.
	status  model.GenerationStatus
	errMsg  string
	deleted bool // removed for the caller; kept only to settle its charge
}

// terminal reports whether the generation reached done, error or timeout.
func (g *generation) terminal() bool {
	switch g.status {
	case model.GenerationStatusDone, model.GenerationStatusError, model.GenerationStatusTimeout:
		return true
	}
	return false
}

// visible reports whether the project still sees the generation at now.
func (g *generation) visible(projectID string, now time.Time) bool {
	return g != nil && !g.deleted && g.projectID == projectID && now.Before(g.expiresAt)
}

// renderDuration is how long a render takes at scale 1.
func renderDuration(kind string, spec outputSpec) time.Duration {
	switch kind {
	case "video":
		return videoRenderBase + time.Duration(spec.duration/time.Second)*videoRenderPerS
	case "audio":
		return min(audioRenderBase+time.Duration(spec.chars/100)*time.Second, audioRenderCap)
	case "text":
		return textRender
	default:
		return imageRender
	}
}

// scaled applies the render scale to d, keeping at least a millisecond so
// that every render passes through pending and running.
func (s *Server) scaled(d time.Duration) time.Duration {
	return max(time.Duration(float64(d)*s.scale), time.Millisecond)
}

// CreateGeneration answers POST /v3/generations: validates the feature and
// its arguments, checks the likeness permission and the balance, charges,
// and starts the render.
func (s *Server) CreateGeneration(ctx context.Context, req api.CreateGenerationRequestObject) (api.CreateGenerationResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	if req.Body == nil {
		return invalidf("the body must be a JSON object with feature and args"), nil
	}
	submitted := string(req.Body.Feature)
	info, ok := feature.Lookup(submitted)
	if !ok {
		if submitted == "" {
			return invalidf("feature is required"), nil
		}
		return invalidf("feature %q is not a feature; use one of %s", submitted, featureNames()), nil
	}
	if req.Body.Args == nil {
		return invalidf("args is required: a JSON object of the feature's arguments"), nil
	}
	if err := s.checkWebhookURL(req.Body.WebhookURL); err != nil {
		return err, nil
	}
	// Drawn before taking s.mu: the outcome function is the caller's code and
	// may call back into the server.
	outcome := s.outcome(info.Name)

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	if err := s.validateArgs(p, info.Name, req.Body.Args, now); err != nil {
		return err, nil
	}
	if err := checkPermission(info.Name, req.Body.Args); err != nil {
		return err, nil
	}
	charge := cost(info.Name, req.Body.Args)
	if p.balance < charge {
		return insufficientBalance(charge, p.balance), nil
	}
	p.balance -= charge

	params := maps.Clone(req.Body.Args)
	spec := outputFor(info, params)
	d := s.scaled(renderDuration(info.Kind, spec))
	s.seq++
	g := &generation{
		id:          fmt.Sprintf("gen_%012x%s", s.seq, randomHex(3)),
		projectID:   p.id,
		projectKey:  p.key,
		feature:     submitted,
		canonical:   info.Name,
		kind:        info.Kind,
		params:      params,
		charge:      charge,
		base:        baseFrom(ctx),
		out:         spec,
		requestDate: now,
		runningAt:   now.Add(time.Duration(float64(d) * pendingShare)),
		endAt:       now.Add(d),
		expiresAt:   now.Add(retention),
		outcome:     outcome,
		status:      model.GenerationStatusPending,
		webhookURL:  req.Body.WebhookURL,
	}
	s.gens[g.id] = g
	return api.CreateGeneration200JSONResponse{Generation: s.generationView(g, g.base)}, nil
}

// featureNames lists the canonical feature names for messages.
func featureNames() string {
	names := make([]string, len(feature.All))
	for i, f := range feature.All {
		names[i] = f.Name
	}
	return strings.Join(names, ", ")
}

// GetGeneration answers GET /v3/generations/{id}.
func (s *Server) GetGeneration(ctx context.Context, req api.GetGenerationRequestObject) (api.GetGenerationResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	s.settle()
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gens[req.ID]
	if !g.visible(p.id, s.clock.Now()) {
		return notFoundf("generation %q not found (generations are removed 24 hours after the request)", req.ID), nil
	}
	return api.GetGeneration200JSONResponse{Generation: s.generationView(g, baseFrom(ctx))}, nil
}

// DeleteGeneration answers DELETE /v3/generations/{id}: the generation and
// its assets disappear at once, nothing is refunded, and a render in flight
// goes on unseen (its charge is still refunded should it fail).
func (s *Server) DeleteGeneration(ctx context.Context, req api.DeleteGenerationRequestObject) (api.DeleteGenerationResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	s.settle()
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gens[req.ID]
	if !g.visible(p.id, s.clock.Now()) {
		return notFoundf("generation %q not found", req.ID), nil
	}
	g.deleted = true
	s.cancelEvent(g.id)
	if g.terminal() {
		delete(s.gens, g.id)
	}
	return api.DeleteGeneration200JSONResponse{Success: true}, nil
}

// ListGenerations answers GET /v3/generations: newest first, keyset
// pagination on (requestDate, id), so pages stay stable while rows are
// added or deleted.
func (s *Server) ListGenerations(ctx context.Context, req api.ListGenerationsRequestObject) (api.ListGenerationsResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	limit := defaultPageSize
	if req.Params.Limit >= 1 {
		limit = min(req.Params.Limit, maxPageSize)
	}
	var after *cursor
	if req.Params.Cursor != "" {
		c, err := decodeCursor(req.Params.Cursor)
		if err != nil {
			return invalidf("cursor is not a nextCursor this server issued"), nil
		}
		after = &c
	}
	filter := ""
	if req.Params.Feature != "" {
		filter = feature.Canonical(req.Params.Feature)
		if filter == "" {
			// An unknown feature matches no row.
			return api.ListGenerations200JSONResponse{Generations: []model.Generation{}}, nil
		}
	}

	s.settle()
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	rows := make([]*generation, 0)
	for _, g := range s.gens {
		if !g.visible(p.id, now) || (filter != "" && g.canonical != filter) {
			continue
		}
		if after != nil && !after.before(g) {
			continue
		}
		rows = append(rows, g)
	}
	sort.Slice(rows, func(i, j int) bool { return newer(rows[i], rows[j]) })
	page := model.GenerationList{Generations: make([]model.Generation, 0, min(limit, len(rows)))}
	for i, g := range rows {
		if i == limit {
			next := encodeCursor(rows[i-1])
			page.NextCursor = &next
			break
		}
		page.Generations = append(page.Generations, s.generationView(g, baseFrom(ctx)))
	}
	return api.ListGenerations200JSONResponse(page), nil
}

// newer orders generations newest first.
func newer(a, b *generation) bool {
	return newestFirst(a.requestDate, a.id, b.requestDate, b.id)
}

// newestFirst is the list order of generations and clones: by request time,
// newest first, then by id, so that rows requested together keep one order.
func newestFirst(aTime time.Time, aID string, bTime time.Time, bID string) bool {
	if !aTime.Equal(bTime) {
		return aTime.After(bTime)
	}
	return aID > bID
}

// cursor is the last row of a page.
type cursor struct {
	t  time.Time
	id string
}

// before reports whether g comes after the cursor's row in list order.
func (c cursor) before(g *generation) bool {
	return newer(&generation{requestDate: c.t, id: c.id}, g)
}

func encodeCursor(g *generation) string {
	raw := g.requestDate.UTC().Format(time.RFC3339Nano) + "|" + g.id
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeCursor(s string) (cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, err
	}
	ts, id, ok := strings.Cut(string(raw), "|")
	if !ok || !strings.HasPrefix(id, "gen_") {
		return cursor{}, fmt.Errorf("malformed cursor")
	}
	t, err := time.Parse(time.RFC3339Nano, ts)
	if err != nil {
		return cursor{}, err
	}
	return cursor{t: t, id: id}, nil
}

// generationView renders g as GET answers it, with output URLs signed for
// base. The caller holds s.mu.
func (s *Server) generationView(g *generation, base string) model.Generation {
	out := model.Generation{
		ID:          g.id,
		ProjectID:   g.projectID,
		Feature:     model.Feature(g.feature),
		Kind:        model.Kind(g.kind),
		Status:      g.status,
		Params:      g.params,
		BalanceUsed: fromUnits(g.charge),
		RequestDate: g.requestDate.UTC(),
	}
	out.ExpiresAt = g.expiresAt.UTC()
	if g.terminal() {
		out.ResponseDate = g.endAt.UTC()
	}
	out.Error = g.errMsg
	if g.status == model.GenerationStatusDone {
		out.Output = s.outputView(g, base)
	}
	return out
}
