package batch

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/mediagen/mediagen-go/client"
)

// ErrOverBudget matches the error of a run refused over [WithBudget], and
// of each item left unsent to stay within it.
var ErrOverBudget = errors.New("batch: over budget")

// money is in ten-thousandths of a USD, the service's unit, so sums are exact.
type money int64

// toMoney caps what an int64 cannot hold: a budget of math.MaxFloat64 is no limit.
func toMoney(usd float64) money { return money(math.Round(min(usd*10_000, 1<<62))) }

func (m money) usd() float64 { return float64(m) / 10_000 }

func (m money) String() string { return fmt.Sprintf("%g USD", m.usd()) }

// ledger is a run's running total; the run's mutex guards it.
type ledger struct {
	budget   money
	limited  bool
	spent    money // refunds credited
	reserved money // estimates in flight, or of uncertain charges
}

// reserve sets est aside for a create, when it fits.
func (l *ledger) reserve(est money) bool {
	if l.limited && l.spent+l.reserved+est > l.budget {
		return false
	}
	l.reserved += est
	return true
}

// settle replaces an item's estimate by what it was charged.
func (l *ledger) settle(est, charged money) {
	l.reserved -= est
	l.spent += charged
}

// price estimates every item at the most it can cost, in item order.
func price(ctx context.Context, c *client.Client, items []Item, s *settings) ([]money, error) {
	// Retry-Afters up to the run's pause are waited out, as for the creates.
	p := c.RetryPolicy()
	p.WaitMin, p.WaitMax = min(p.WaitMin, s.maxPause), s.maxPause
	prices, err := c.Pricing(ctx, append([]client.Option{client.WithRetryPolicy(p)}, s.clientOpts...)...)
	if err != nil {
		return nil, fmt.Errorf("batch: reading the price list: %w", err)
	}
	ests := make([]money, len(items))
	for i, it := range items {
		e, err := prices.Estimate(it.Args)
		if err != nil {
			return nil, fmt.Errorf("batch: item %d (key %q): %w", i, it.Key, err)
		}
		ests[i] = toMoney(e.Max)
	}
	return ests, nil
}

// fit returns how many items the budget covers: all, or with
// [WithFitBudget] the longest prefix that fits; otherwise [ErrOverBudget].
func fit(ests []money, s *settings) (int, error) {
	var total money
	n := -1
	for i, e := range ests {
		if total+e > s.budget && n < 0 {
			n = i
		}
		total += e
	}
	switch {
	case n < 0:
		return len(ests), nil
	case s.fit:
		return n, nil
	}
	return 0, fmt.Errorf("%w: the %d items may cost up to %s, and the budget is %s; nothing was sent (batch.WithFitBudget runs the first %d)",
		ErrOverBudget, len(ests), total, s.budget, n)
}
