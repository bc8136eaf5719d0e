package refserver

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
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
	timer // its next transition: running, end of render or expiry

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
	status  mediagen.GenerationStatus
	errMsg  string
	deleted bool // removed for the caller; kept only to settle its charge
}

// terminal reports whether the generation reached done, error or timeout.
func (g *generation) terminal() bool {
	switch g.status {
	case mediagen.GenerationStatusDone, mediagen.GenerationStatusError, mediagen.GenerationStatusTimeout:
		return true
	}
	return false
}

// due returns when g next changes: it starts running, its render ends, or
// it expires, whichever comes first.
func (g *generation) due() time.Time {
	switch {
	case g.status == mediagen.GenerationStatusPending:
		return earliest(g.runningAt, g.expiresAt)
	case !g.terminal():
		return earliest(g.endAt, g.expiresAt)
	}
	return g.expiresAt
}

// earliest returns the earlier of a and b.
func earliest(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// before orders generations as lists show them, newest first.
func (g *generation) before(o *generation) bool { return newer(g, o) }

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

// list adds g to the indexes its project's pages are read from. The caller
// holds s.mu.
func (s *Server) list(p *project, g *generation) {
	p.gens.Insert(g)
	idx := p.byFeature[g.canonical]
	if idx == nil {
		if p.byFeature == nil {
			p.byFeature = map[string]*rowIndex[*generation]{}
		}
		idx = &rowIndex[*generation]{}
		p.byFeature[g.canonical] = idx
	}
	idx.Insert(g)
}

// unlist takes g out of its project's indexes, once deleted or expired.
// The caller holds s.mu.
func (s *Server) unlist(g *generation) {
	p, ok := s.projects[g.projectKey]
	if !ok {
		return
	}
	p.gens.Remove(g)
	if idx := p.byFeature[g.canonical]; idx != nil {
		idx.Remove(g)
	}
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
	if err := s.validateArgs(p, info, req.Body.Args, now); err != nil {
		return err, nil
	}
	if err := checkPermission(info, req.Body.Args); err != nil {
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
		requestDate: now.Round(0), // wall time only, so the index and cursors agree on the order
		runningAt:   now.Add(time.Duration(float64(d) * pendingShare)),
		endAt:       now.Add(d),
		expiresAt:   now.Add(retention),
		outcome:     outcome,
		status:      mediagen.GenerationStatusPending,
		webhookURL:  req.Body.WebhookURL,
	}
	s.gens[g.id] = g
	s.list(p, g)
	s.timers.schedule(g, g.due())
	return api.CreateGeneration200JSONResponse{Generation: s.generationView(g, g.base)}, nil
}

// featureNames lists the canonical feature names for messages.
func featureNames() string {
	return strings.Join(feature.Names(), ", ")
}

// GetGeneration answers GET /v3/generations/{id}.
func (s *Server) GetGeneration(ctx context.Context, req api.GetGenerationRequestObject) (api.GetGenerationResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	now := s.lockSettled()
	defer s.mu.Unlock()
	g := s.gens[req.ID]
	if !g.visible(p.id, now) {
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
	now := s.lockSettled()
	defer s.mu.Unlock()
	g := s.gens[req.ID]
	if !g.visible(p.id, now) {
		return notFoundf("generation %q not found", req.ID), nil
	}
	s.unlist(g)
	g.deleted = true
	s.cancelEvent(g.id)
	if g.terminal() {
		// Nothing is left to settle; an unfinished render keeps its timer
		// so that a failure is still refunded.
		delete(s.gens, g.id)
		s.timers.cancel(g)
	}
	return api.DeleteGeneration200JSONResponse{Success: true}, nil
}

// ListGenerations answers GET /v3/generations: newest first, keyset
// pagination on (requestDate, id), so pages stay stable while rows are
// added or deleted. A page is read from the project's index, so its cost
// does not grow with the rows stored.
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
			return api.ListGenerations200JSONResponse{Generations: []mediagen.Generation{}}, nil
		}
	}

	s.lockSettled()
	defer s.mu.Unlock()
	// Settled at this instant, the project's indexes hold exactly the rows
	// it sees: deleted and expired ones were taken out.
	idx := &p.gens
	if filter != "" {
		idx = p.byFeature[filter]
	}
	var from func(*generation) bool
	if after != nil {
		from = after.before
	}
	var rows []*generation
	more := false
	if idx != nil {
		rows, more = idx.Page(from, limit)
	}
	page := api.GenerationList{Generations: make([]mediagen.Generation, 0, len(rows))}
	for _, g := range rows {
		page.Generations = append(page.Generations, s.generationView(g, baseFrom(ctx)))
	}
	if more {
		next := encodeCursor(rows[len(rows)-1])
		page.NextCursor = &next
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
	return newestFirst(c.t, c.id, g.requestDate, g.id)
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
func (s *Server) generationView(g *generation, base string) mediagen.Generation {
	out := mediagen.Generation{
		ID:          g.id,
		ProjectID:   g.projectID,
		Feature:     mediagen.Feature(g.feature),
		Kind:        mediagen.Kind(g.kind),
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
	if g.status == mediagen.GenerationStatusDone {
		out.Output = s.outputView(g, base)
	}
	return out
}
