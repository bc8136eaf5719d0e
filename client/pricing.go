package client

import (
	"context"
	"maps"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
)

// Pricing is the price list of the project's plan, keyed by canonical
// feature name, plus [mediagen.FeatureVoiceClone]; only features the plan
// prices appear. Prices apply when a call is made: reading them holds
// nothing. [Pricing.Estimate] gives the cost of a call.
type Pricing map[mediagen.Feature]mediagen.PricingEntry

// Pricing reads the price list of the project's plan. Entries that carry
// their price as "amount" come back with Price set from it.
func (c *Client) Pricing(ctx context.Context, opts ...Option) (Pricing, error) {
	cfg, err := c.configure(opts)
	if err != nil {
		return nil, err
	}
	r, err := fromGenerated(api.NewGetPricingRequest(c.server))
	if err != nil {
		return nil, err
	}
	var t api.PricingTable
	if _, err := c.do(ctx, cfg, r, &t); err != nil {
		return nil, err
	}
	p := make(Pricing, len(t.Prices))
	for name, e := range t.Prices {
		p[mediagen.Feature(name)] = e
	}
	kept := p.clone() // the caller may change p
	c.prices.Store(&kept)
	return p, nil
}

// clone copies p down to the variants' maps.
func (p Pricing) clone() Pricing {
	out := maps.Clone(p)
	for f, e := range out {
		e.Variants = maps.Clone(e.Variants)
		for arg, m := range e.Variants {
			e.Variants[arg] = maps.Clone(m)
		}
		out[f] = e
	}
	return out
}

// Entry returns the price of a feature given in either spelling.
func (p Pricing) Entry(feature mediagen.Feature) (mediagen.PricingEntry, bool) {
	if e, ok := p[feature]; ok {
		return e, true
	}
	e, ok := p[CanonicalFeature(feature)]
	return e, ok
}
