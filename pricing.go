package mediagen

import "encoding/json"

// UnmarshalJSON decodes an entry, reading "amount" (a spelling the interface
// document shows in a sample) as the price when "price" is absent.
func (e *PricingEntry) UnmarshalJSON(b []byte) error {
	type fields PricingEntry // the same fields without this method
	var in struct {
		fields
		Amount *float64 `json:"amount"`
		Price  *float64 `json:"price"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*e = PricingEntry(in.fields)
	switch {
	case in.Price != nil:
		e.Price = *in.Price
	case in.Amount != nil:
		e.Price = *in.Amount
	}
	return nil
}
