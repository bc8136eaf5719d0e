package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/charge"
	"github.com/mediagen/mediagen-go/internal/engine"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// CreateGeneration submits a generation with args, typed (such as
// [LogoRevealArgs]) or [RawArgs], and returns it in status [mediagen.GenerationStatusPending].
// The balance is charged now and refunded if the generation ends in error or
// timeout; follow it with package poll, [Client.GetGeneration] or a webhook
// ([WithWebhookURL]).
//
// Arguments the contract rules out for a known feature (one missing,
// unknown, null, of the wrong type or out of bounds) are refused before
// anything is sent, with an error matching [ErrInvalidArgument] whose text
// ends with the message the service would answer. Whether a file or voice
// exists, and the likeness permission, are the service's to judge.
//
// Retries never charge twice: when an attempt fails ambiguously the client
// finds the generation the attempt created, if any, and returns it instead of
// submitting again. An error from CreateGeneration therefore means nothing was
// charged, with two exceptions: an [*UncertainError] (the search itself
// failed), and the context ending after a request may have reached the
// service, in which case ctx.Err() is returned and the generation may exist:
// look for it with [Client.Generations] filtered by feature.
//
// Only this Client's own calls are told apart: when two Clients (or
// processes) submit the same feature and arguments seconds apart and one
// attempt fails ambiguously, both may be handed the same generation.
func (c *Client) CreateGeneration(ctx context.Context, args Args, opts ...Option) (*mediagen.Generation, error) {
	a, err := encodeArgs(args)
	if err != nil {
		return nil, err
	}
	if err := feature.Check(string(a.feature), a.params()); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	op := &generationOp{c: c, cfg: cfg, args: a}
	op.body = createGenerationRequestBody(&op.args, cfg.s.webhookURL)
	ctx, job := c.startJob(ctx, cfg, string(a.feature))
	var rec journal.Record
	if cfg.s.idemKey != "" {
		rec = journal.Record{Op: "generation", Feature: string(a.feature), Fingerprint: fingerprint("generation", op.Key()),
			Estimate: c.prices.estimate(args), Trace: job.Traceparent()}
	}
	g, err := charge.Submit(ctx, c.proto, &cfg.charge, op, rec)
	if err != nil {
		job.Created("", "", 0, err)
		return nil, uncertain(err, func(e *UncertainError) { e.Args = RawArgs{FeatureName: op.args.feature, Values: op.args.params()} })
	}
	job.Created(g.ID, string(g.Kind), g.BalanceUsed, nil)
	return g, nil
}

// generationOp is creating a generation, for the charging protocol: args
// and body, the encoded request, under cfg; body nil only searches.
type generationOp struct {
	c    *Client
	cfg  *config
	args encodedArgs
	body []byte
}

func (o *generationOp) What() string { return "generation" }

func (o *generationOp) Post(ctx context.Context) (*mediagen.Generation, time.Time, error) {
	var env api.GenerationEnvelope
	r := o.c.createGenerationRequest(o.body)
	resp, err := o.c.do(ctx, o.cfg, &r, &env)
	if err != nil {
		return nil, time.Time{}, err
	}
	if env.Generation.ID == "" {
		return nil, time.Time{}, newBodyError(resp, errNoID)
	}
	return &env.Generation, serverDate(resp), nil
}

func (o *generationOp) ID(g *mediagen.Generation) string { return g.ID }

func (o *generationOp) Requested(g *mediagen.Generation) time.Time { return g.RequestDate }

// Key is the feature and the arguments as a map, which marshals with
// sorted keys: the same key whether they came typed (CreateGeneration) or
// raw (FindGeneration).
func (o *generationOp) Key() string {
	b, _ := json.Marshal(o.args.params())
	return string(o.args.feature) + "\x00" + string(b)
}

func (o *generationOp) Find(ctx context.Context, win charge.Window) ([]*mediagen.Generation, time.Time, error) {
	return o.c.findGenerations(ctx, o.c.searchConfig(o.cfg), o.args.feature, o.args.params(), win)
}

func (o *generationOp) Get(ctx context.Context, id string) (*mediagen.Generation, error) {
	return o.c.getGeneration(ctx, o.cfg, id)
}

// GetGeneration returns the generation id. It answers [ErrNotFound] once the
// generation was deleted or expired (24 hours after the request).
func (c *Client) GetGeneration(ctx context.Context, id string, opts ...Option) (*mediagen.Generation, error) {
	if id == "" {
		return nil, fmt.Errorf("%w: empty generation id", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	return c.getGeneration(ctx, cfg, id)
}

func (c *Client) getGeneration(ctx context.Context, cfg *config, id string) (*mediagen.Generation, error) {
	var env api.GenerationEnvelope
	r := c.getGenerationRequest(id)
	if _, err := c.do(ctx, cfg, &r, &env); err != nil {
		return nil, err
	}
	return &env.Generation, nil
}

// DeleteGeneration removes the generation id and its assets. There is no
// refund, and work in flight is not cancelled. A retried delete that finds
// the generation gone after an earlier attempt may have removed it reports
// success.
func (c *Client) DeleteGeneration(ctx context.Context, id string, opts ...Option) error {
	if id == "" {
		return fmt.Errorf("%w: empty generation id", ErrInvalidArgument)
	}
	cfg, err := c.configure(opts)
	if err != nil {
		return err
	}
	r, err := fromGenerated(api.NewDeleteGenerationRequest(c.server, id))
	if err != nil {
		return err
	}
	return c.delete(ctx, cfg, r)
}

// delete sends a DELETE, forgiving the 404 of a retried delete whose
// earlier attempt may have done the work; an answer of success false is
// an error, as nothing was deleted.
func (c *Client) delete(ctx context.Context, cfg *config, r *engine.Request) error {
	var out api.Success
	_, err := c.do(ctx, cfg, r, &out)
	switch {
	case errors.Is(err, ErrNotFound) && r.Acted:
		return nil
	case err == nil && !out.Success:
		return fmt.Errorf("mediagen: DELETE %s: the service answered success false: nothing was deleted", r.URL.Path)
	}
	return err
}

// encodedArgs are the arguments of one generation, encoded once: raw is
// what is sent, and params, decoded from raw when first needed (for a
// check or a search), compares equal to the params a generation echoes
// exactly when their JSON does.
type encodedArgs struct {
	feature mediagen.Feature
	raw     []byte
	m       map[string]any
}

// params returns the arguments as a JSON object, decoding raw on first use.
// raw is known to encode an object.
func (a *encodedArgs) params() map[string]any {
	if a.m == nil {
		if err := json.Unmarshal(a.raw, &a.m); err != nil || a.m == nil {
			a.m = map[string]any{}
		}
	}
	return a.m
}

// encodeArgs returns args with their feature, encoded.
func encodeArgs(args Args) (encodedArgs, error) {
	if args == nil {
		return encodedArgs{}, fmt.Errorf("%w: nil arguments", ErrInvalidArgument)
	}
	if v := reflect.ValueOf(args); v.Kind() == reflect.Pointer && v.IsNil() {
		return encodedArgs{}, fmt.Errorf("%w: arguments are a nil %T", ErrInvalidArgument, args)
	}
	feature := args.Feature()
	if feature == "" {
		return encodedArgs{}, fmt.Errorf("%w: empty feature", ErrInvalidArgument)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return encodedArgs{}, fmt.Errorf("%w: arguments: %v", ErrInvalidArgument, err)
	}
	// json.Marshal output is compact and valid: an object starts with '{'.
	if len(raw) == 0 || raw[0] != '{' {
		return encodedArgs{}, fmt.Errorf("%w: arguments must encode as a JSON object, got %T", ErrInvalidArgument, args)
	}
	return encodedArgs{feature: feature, raw: raw}, nil
}
