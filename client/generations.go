package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client/journal"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/charge"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// CreateGeneration submits a generation with args, typed (such as
// [LogoRevealArgs]) or [RawArgs], and returns it pending. The balance is
// charged now and refunded if it ends in error or timeout; follow it with
// package poll, [Client.GetGeneration] or a webhook ([WithWebhookURL]).
// Arguments the contract rules out are refused before anything is sent,
// with an error matching [ErrInvalidArgument] that ends with the service's
// message.
//
// Retries never charge twice: after an ambiguous failure the client finds
// the generation the attempt created, if any, instead of submitting again.
// So an error means nothing was charged, except an [*UncertainError] (the
// search failed) and ctx.Err() after a request may have reached the
// service (look with [Client.Generations] by feature). Only this Client's
// calls are told apart: two Clients submitting the same arguments seconds
// apart may, after an ambiguous failure, both get the same generation.
func (c *Client) CreateGeneration(ctx context.Context, args Args, opts ...Option) (*mediagen.Generation, error) {
	// The options come first, as the webhook is part of the body, but their
	// error after the arguments'.
	cfg, cerr := c.configure(opts)
	webhookURL := ""
	if cerr == nil {
		webhookURL = cfg.s.webhookURL
	}
	a, body, err := encodeCreate(args, webhookURL)
	if err != nil {
		return nil, err
	}
	op := &generationOp{c: c, cfg: cfg, args: a, body: body}
	checked, err := checkTyped(args)
	if !checked {
		err = feature.Check(string(a.feature), op.args.params())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	if cerr != nil {
		return nil, cerr
	}
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

// generationOp is creating a generation, for the charging protocol; body
// nil only searches.
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

// Key marshals the arguments as a map, with sorted keys, so typed and raw
// arguments get the same key.
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

// GetGeneration returns the generation id; [ErrNotFound] once it was
// deleted or expired (24 hours after the request).
func (c *Client) GetGeneration(ctx context.Context, id string, opts ...Option) (*mediagen.Generation, error) {
	cfg, err := c.configureID("generation", id, opts)
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

// DeleteGeneration removes the generation id and its assets, with no
// refund; work in flight is not cancelled. A retried delete that finds it
// gone reports success.
func (c *Client) DeleteGeneration(ctx context.Context, id string, opts ...Option) error {
	return c.delete(ctx, "generation", id, opts, api.NewDeleteGenerationRequest)
}

// delete deletes the what id, forgiving the 404 of a retried delete whose
// earlier attempt may have done the work; success false deleted nothing.
func (c *Client) delete(ctx context.Context, what, id string, opts []Option, build func(string, string) (*http.Request, error)) error {
	cfg, err := c.configureID(what, id, opts)
	if err != nil {
		return err
	}
	r, err := fromGenerated(build(c.server, id))
	if err != nil {
		return err
	}
	var out api.Success
	_, err = c.do(ctx, cfg, r, &out)
	switch {
	case errors.Is(err, ErrNotFound) && r.Acted:
		return nil
	case err == nil && !out.Success:
		return fmt.Errorf("mediagen: DELETE %s: the service answered success false: nothing was deleted", r.URL.Path)
	}
	return err
}

// configureID is configure for a call on the what id, which must be set and not a dot segment, which a
// URL resolves away (GET /v3/generations/. is the list).
func (c *Client) configureID(what, id string, opts []Option) (*config, error) {
	if id == "" || id == "." || id == ".." {
		return nil, fmt.Errorf("%w: %s id %q is not an id", ErrInvalidArgument, what, id)
	}
	return c.configure(opts)
}

// send sends the request build makes for arg and decodes the answer.
func send[T, A any](ctx context.Context, c *Client, cfg *config, build func(string, A) (*http.Request, error), arg A) (*T, *http.Response, error) {
	r, err := fromGenerated(build(c.server, arg))
	if err != nil {
		return nil, nil, err
	}
	var out T
	resp, err := c.do(ctx, cfg, r, &out)
	if err != nil {
		return nil, nil, err
	}
	return &out, resp, nil
}

// encodedArgs are the arguments of one generation, encoded once: raw is
// sent, and params, decoded from raw on first use, equals the params a
// generation echoes exactly when their JSON does.
type encodedArgs struct {
	feature mediagen.Feature
	raw     []byte
	m       map[string]any
}

func (a *encodedArgs) params() map[string]any {
	if a.m == nil {
		if err := json.Unmarshal(a.raw, &a.m); err != nil || a.m == nil {
			a.m = map[string]any{}
		}
	}
	return a.m
}

// encodeArgs encodes args as json.Marshal would, for an estimate or a search.
func encodeArgs(args Args) (encodedArgs, error) {
	e := encoders.Get().(*encoder)
	defer e.put()
	feature, raw, err := e.encode(args)
	if err != nil {
		return encodedArgs{}, err
	}
	return encodedArgs{feature: feature, raw: bytes.Clone(raw)}, nil
}

// encodeCreate encodes args once, straight into the body of a create with
// webhookURL: raw is a slice of the body.
func encodeCreate(args Args, webhookURL string) (encodedArgs, []byte, error) {
	e := encoders.Get().(*encoder)
	defer e.put()
	feature, raw, err := e.encode(args)
	if err != nil {
		return encodedArgs{}, nil, err
	}
	body := createGenerationRequestBody(raw, string(feature), webhookURL)
	n := len(`{"args":`) + len(raw)
	return encodedArgs{feature: feature, raw: body[len(`{"args":`):n:n]}, body, nil
}

// encode writes args into e's buffer as json.Marshal would (compact and
// valid); raw is e's, valid until e.put.
func (e *encoder) encode(args Args) (feature mediagen.Feature, raw []byte, err error) {
	if args == nil {
		return "", nil, fmt.Errorf("%w: nil arguments", ErrInvalidArgument)
	}
	if v := reflect.ValueOf(args); v.Kind() == reflect.Pointer && v.IsNil() {
		return "", nil, fmt.Errorf("%w: arguments are a nil %T", ErrInvalidArgument, args)
	}
	if feature = args.Feature(); feature == "" {
		return "", nil, fmt.Errorf("%w: empty feature", ErrInvalidArgument)
	}
	raw, typed := appendTyped(e.buf.AvailableBuffer(), args)
	if typed {
		e.buf.Write(raw)
	} else if err := e.enc.Encode(args); err != nil {
		return "", nil, fmt.Errorf("%w: arguments: %v", ErrInvalidArgument, err)
	} else {
		raw = e.buf.Bytes()[:e.buf.Len()-1] // Encode ends with a newline
	}
	if raw[0] != '{' { // an object starts with '{'
		return "", nil, fmt.Errorf("%w: arguments must encode as a JSON object, got %T", ErrInvalidArgument, args)
	}
	return feature, raw, nil
}

// encoder encodes arguments into a buffer of its own, reused: json.Marshal
// would allocate one more copy of each create's arguments. Typed arguments
// encode themselves (appendTyped), without reflection.
type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

var encoders = sync.Pool{New: func() any {
	e := &encoder{}
	e.enc = json.NewEncoder(&e.buf)
	return e
}}

func (e *encoder) put() {
	if e.buf.Cap() <= 64<<10 {
		e.buf.Reset()
		encoders.Put(e)
	}
}
