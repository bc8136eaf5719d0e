package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"time"

	"github.com/mediagen/mediagen-go/internal/api/model"
)

// CreateOption configures one [Client.CreateGeneration] call.
type CreateOption func(*createSettings)

type createSettings struct {
	webhookURL string
}

// WithWebhookURL asks the service to POST a signed event to u when the
// generation first reaches a terminal state. u must be https and publicly
// reachable; the service refuses anything else with 400.
func WithWebhookURL(u string) CreateOption {
	return func(s *createSettings) { s.webhookURL = u }
}

// CreateGeneration submits a generation of feature (canonical or legacy
// spelling) with args, one of the typed argument structs such as
// [LogoRevealArgs] or a map[string]any, and returns it in status
// [StatusPending]. The balance is charged now and refunded if the generation
// ends in error or timeout; follow it with [Client.GetGeneration] or a
// webhook.
//
// A typed args whose Feature differs from feature, and values the interface
// document rules out (a logo reveal's mode and aspect ratio), are refused
// before anything is sent, with an error matching [ErrInvalidArgument].
//
// Retries never charge twice: when an attempt fails ambiguously the client
// finds the generation the attempt created, if any, and returns it instead of
// submitting again. An error from CreateGeneration therefore means nothing was
// charged, with two exceptions: an [*UncertainError] (the search itself
// failed), and the context ending after a request may have reached the
// service (while it was in flight, or while the client waited to look for
// what it created), in which case ctx.Err() is returned and the generation
// may exist: look for it with [Client.Generations] filtered by feature.
//
// Only this Client's own calls are told apart: when two Clients (or
// processes) submit the same feature and arguments seconds apart and one
// attempt fails ambiguously, both may be handed the same generation.
func (c *Client) CreateGeneration(ctx context.Context, feature string, args any, opts ...CreateOption) (*Generation, error) {
	params, err := generationArgs(feature, args)
	if err != nil {
		return nil, err
	}
	var s createSettings
	for _, o := range opts {
		o(&s)
	}
	body := model.CreateGenerationRequest{Feature: model.Feature(feature), Args: params}
	if s.webhookURL != "" {
		body.WebhookUrl = &s.webhookURL
	}
	want := normalizeJSON(params)
	key, _ := json.Marshal([]any{feature, want})
	return submit(ctx, c, charge[Generation]{
		key:  string(key),
		what: "generation",
		post: func(ctx context.Context) (*Generation, error) {
			resp, err := c.api.CreateGeneration(ctx, body)
			var env model.GenerationEnvelope
			if err := c.decode(ctx, resp, err, &env); err != nil {
				return nil, err
			}
			if env.Generation.Id == "" {
				return nil, newBodyError(resp, errNoID)
			}
			return &env.Generation, nil
		},
		id: func(g *Generation) string { return g.Id },
		find: func(ctx context.Context, win searchWindow) ([]*Generation, time.Time, error) {
			return c.findGenerations(ctx, feature, want, win)
		},
	})
}

// maxSearchPages bounds the pages a search after an ambiguous failure reads.
// A search that reaches it without seeing the attempt's start has not looked
// everywhere its row could be, and fails rather than report none.
const maxSearchPages = 10

// findGenerations lists the project's generations of feature newest first
// and returns those whose params equal want and that were requested inside
// win, oldest first.
func (c *Client) findGenerations(ctx context.Context, feature string, want any, win searchWindow) ([]*Generation, time.Time, error) {
	var (
		out   []*Generation
		bound time.Time
	)
	ctx = withSearch(ctx)
	p := ListParams{Feature: feature, Limit: maxPageSize}
	for page := 0; ; page++ {
		if page == maxSearchPages {
			return nil, time.Time{}, fmt.Errorf("mediagen: more than %d %s generations requested since the attempt began; stopped searching", page*maxPageSize, feature)
		}
		pg, resp, err := c.listGenerations(ctx, p)
		if err != nil {
			return nil, time.Time{}, err
		}
		if page == 0 {
			bound = win.bound(serverDate(resp), time.Now())
		}
		older := false
		for _, g := range pg.Generations {
			if g.RequestDate.Before(bound) {
				older = true
				continue
			}
			// The feature as spelled: the row must echo what this call sent.
			if string(g.Feature) == feature && reflect.DeepEqual(normalizeJSON(g.Params), want) {
				out = append(out, g)
			}
		}
		if older || pg.NextCursor == "" {
			break
		}
		p.Cursor = pg.NextCursor
	}
	slices.Reverse(out)
	c.logger.DebugContext(ctx, "mediagen: searched generations", slog.String("feature", feature),
		slog.Int("matches", len(out)), slog.Time("since", bound))
	return out, bound, nil
}

// GetGeneration returns the generation id. It answers [ErrNotFound] once the
// generation was deleted or expired (24 hours after the request).
func (c *Client) GetGeneration(ctx context.Context, id string) (*Generation, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: empty generation id", ErrInvalidArgument)
	}
	resp, err := c.api.GetGeneration(ctx, id)
	var env model.GenerationEnvelope
	if err := c.decode(ctx, resp, err, &env); err != nil {
		return nil, err
	}
	return &env.Generation, nil
}

// DeleteGeneration removes the generation id and its assets. There is no
// refund, and work in flight is not cancelled. A retried delete that finds
// the generation gone after an earlier attempt may have removed it reports
// success.
func (c *Client) DeleteGeneration(ctx context.Context, id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty generation id", ErrInvalidArgument)
	}
	ctx, st := withCall(ctx, classSafe)
	resp, err := c.api.DeleteGeneration(ctx, id)
	return deleted(c.decode(ctx, resp, err, nil), st)
}

// deleted forgives the 404 of a retried delete whose earlier attempt may
// have done the work.
func deleted(err error, st *call) error {
	if errors.Is(err, ErrNotFound) && st.acted.Load() {
		return nil
	}
	return err
}

// generationArgs turns args into the JSON object sent, after the checks the
// interface document allows the client to make.
func generationArgs(feature string, args any) (map[string]any, error) {
	if feature == "" {
		return nil, fmt.Errorf("%w: empty feature", ErrInvalidArgument)
	}
	params, err := argsMap(args)
	if err != nil {
		return nil, err
	}
	if err := checkArgsFeature(feature, args); err != nil {
		return nil, err
	}
	if err := checkArgs(feature, params); err != nil {
		return nil, err
	}
	return params, nil
}

// checkArgsFeature refuses typed arguments of another feature than feature.
// args has been through argsMap, so it is not a nil pointer.
func checkArgsFeature(feature string, args any) error {
	if f, ok := args.(interface{ Feature() string }); ok && !sameFeature(f.Feature(), feature) {
		return fmt.Errorf("%w: arguments of %s passed for feature %s", ErrInvalidArgument, f.Feature(), feature)
	}
	return nil
}

// argsMap converts a typed args struct or a map to a JSON object. nil and a
// nil map are no arguments; a nil pointer is refused.
func argsMap(args any) (map[string]any, error) {
	switch v := reflect.ValueOf(args); {
	case args == nil, v.Kind() == reflect.Map && v.IsNil():
		return map[string]any{}, nil
	case v.Kind() == reflect.Pointer && v.IsNil():
		return nil, fmt.Errorf("%w: arguments are a nil %T", ErrInvalidArgument, args)
	}
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("%w: arguments: %v", ErrInvalidArgument, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil || m == nil {
		return nil, fmt.Errorf("%w: arguments must be a JSON object, got %T", ErrInvalidArgument, args)
	}
	return m, nil
}

// normalizeJSON gives v the shape encoding/json decodes it to, so that sent
// arguments and echoed params compare equal exactly when their JSON does.
func normalizeJSON(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return nil
	}
	return out
}

// checkArgs applies what the interface document states about arguments; the
// service judges everything else.
func checkArgs(feature string, args map[string]any) error {
	if CanonicalFeature(feature) != FeatureLogoReveal {
		return nil
	}
	var errs []error
	for _, name := range []string{"image", "prompt"} {
		if s, ok := args[name].(string); !ok || s == "" {
			errs = append(errs, fmt.Errorf("%s is required", name))
		}
	}
	oneOf := func(name string, allowed ...string) {
		v, ok := args[name]
		if !ok {
			return
		}
		if s, isStr := v.(string); !isStr || !slices.Contains(allowed, s) {
			errs = append(errs, fmt.Errorf("%s %v is not one of %q", name, v, allowed))
		}
	}
	oneOf("mode", string(ModeIntro), string(ModeOutro))
	oneOf("aspectRatio", string(Aspect16x9), string(Aspect9x16))
	if v, ok := args["generateAudio"]; ok {
		if _, isBool := v.(bool); !isBool {
			errs = append(errs, fmt.Errorf("generateAudio %v is not a boolean", v))
		}
	}
	if v, ok := args["duration"]; ok {
		if f, isNum := v.(float64); !isNum || f != float64(int64(f)) {
			errs = append(errs, fmt.Errorf("duration %v is not an integer", v))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalidArgument, FeatureLogoReveal, err)
	}
	return nil
}
