package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
)

// tinyServer implements three operations of the generated strict interface;
// the embedded interface makes any other call panic, which the tests never make.
type tinyServer struct {
	api.StrictServerInterface

	mu          sync.Mutex
	generations []mediagen.Generation // newest first
	gotParams   api.ListGenerationsParams
	gotAuth     string
}

func (s *tinyServer) CreateGeneration(ctx context.Context, req api.CreateGenerationRequestObject) (api.CreateGenerationResponseObject, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if req.Body.Feature == "" || !req.Body.Feature.Valid() {
		return api.CreateGeneration400JSONResponse{BadRequestJSONResponse: api.BadRequestJSONResponse{
			Error: api.ErrorDetail{Code: api.ErrorCodeInvalidArgument, Message: "unknown feature"},
		}}, nil
	}
	g := mediagen.Generation{
		ID: "gen_" + string(rune('a'+len(s.generations))), ProjectID: "prj_1", Feature: req.Body.Feature,
		Kind: mediagen.KindVideo, Status: mediagen.GenerationStatusPending, Params: req.Body.Args,
		BalanceUsed: 0.5, RequestDate: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC),
	}
	s.generations = append([]mediagen.Generation{g}, s.generations...)
	return api.CreateGeneration200JSONResponse{Generation: g}, nil
}

func (s *tinyServer) ListGenerations(ctx context.Context, req api.ListGenerationsRequestObject) (api.ListGenerationsResponseObject, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gotParams = req.Params
	out := []mediagen.Generation{}
	for _, g := range s.generations {
		if req.Params.Feature == "" || string(g.Feature) == req.Params.Feature {
			out = append(out, g)
		}
	}
	if req.Params.Limit != 0 && req.Params.Limit < len(out) {
		out = out[:req.Params.Limit]
	}
	return api.ListGenerations200JSONResponse{Generations: out, NextCursor: nil}, nil
}

func (s *tinyServer) GetGeneration(ctx context.Context, req api.GetGenerationRequestObject) (api.GetGenerationResponseObject, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.generations {
		if g.ID == req.ID {
			return api.GetGeneration200JSONResponse{Generation: g}, nil
		}
	}
	return api.GetGeneration404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse{
		Error: api.ErrorDetail{Code: api.ErrorCodeNotFound, Message: "generation not found"},
	}}, nil
}

func setup(t *testing.T) (*tinyServer, *api.ClientWithResponses) {
	t.Helper()
	impl := &tinyServer{}
	handler := api.Handler(api.NewStrictHandler(impl, nil))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		impl.mu.Lock()
		impl.gotAuth = r.Header.Get("Authorization")
		impl.mu.Unlock()
		handler.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	c, err := api.NewClientWithResponses(srv.URL, api.WithRequestEditorFn(func(ctx context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "key_123")
		return nil
	}))
	require.NoError(t, err)
	return impl, c
}

func TestRoundTripJSONBody(t *testing.T) {
	impl, c := setup(t)
	ctx := context.Background()

	resp, err := c.CreateGenerationWithResponse(ctx, api.CreateGenerationJSONRequestBody{
		Feature: "logo-reveal",
		Args:    map[string]any{"image": "file_1", "prompt": "sparks", "duration": 5},
	})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	require.NotNil(t, resp.JSON200)
	g := resp.JSON200.Generation
	assert.Equal(t, mediagen.Feature("logo-reveal"), g.Feature, "legacy spelling echoed as submitted")
	assert.Equal(t, mediagen.GenerationStatusPending, g.Status)
	assert.Equal(t, "sparks", g.Params["prompt"])
	assert.InDelta(t, 5.0, g.Params["duration"], 0, "numbers survive the wire as JSON numbers")
	assert.Equal(t, 0.5, g.BalanceUsed)
	assert.True(t, g.RequestDate.Equal(time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)))
	assert.Equal(t, "key_123", impl.gotAuth, "the raw key, no Bearer prefix")
}

func TestRoundTripQueryParameters(t *testing.T) {
	impl, c := setup(t)
	ctx := context.Background()
	for _, f := range []mediagen.Feature{"image/generation", "video/logo-reveal", "image/generation"} {
		_, err := c.CreateGenerationWithResponse(ctx, api.CreateGenerationJSONRequestBody{Feature: f, Args: map[string]any{"prompt": "x"}})
		require.NoError(t, err)
	}
	feature, limit, cursor := "image/generation", 1, "opaque/cursor=+"
	resp, err := c.ListGenerationsWithResponse(ctx, &api.ListGenerationsParams{Feature: feature, Limit: limit, Cursor: cursor})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode())
	require.Len(t, resp.JSON200.Generations, 1)
	assert.Equal(t, "gen_c", resp.JSON200.Generations[0].ID, "newest first")
	assert.Nil(t, resp.JSON200.NextCursor)
	assert.Contains(t, string(resp.Body), `"nextCursor":null`, "nextCursor is sent as null, not omitted")
	assert.Equal(t, cursor, impl.gotParams.Cursor, "the cursor survives query escaping")
	assert.Equal(t, 1, impl.gotParams.Limit)
}

func TestRoundTripErrorStatus(t *testing.T) {
	_, c := setup(t)
	ctx := context.Background()

	resp, err := c.GetGenerationWithResponse(ctx, "missing")
	require.NoError(t, err)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode())
	require.NotNil(t, resp.JSON404)
	assert.Equal(t, api.ErrorCodeNotFound, resp.JSON404.Error.Code)
	assert.Nil(t, resp.JSON200)

	bad, err := c.CreateGenerationWithResponse(ctx, api.CreateGenerationJSONRequestBody{Feature: "video/nope", Args: map[string]any{}})
	require.NoError(t, err)
	assert.Equal(t, http.StatusBadRequest, bad.StatusCode())
	require.NotNil(t, bad.JSON400)
	assert.Equal(t, api.ErrorCodeInvalidArgument, bad.JSON400.Error.Code)
}
