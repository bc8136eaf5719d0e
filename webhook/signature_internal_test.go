package webhook

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseSignatures(t *testing.T) {
	a := strings.Repeat("ab", 32)
	b := strings.Repeat("0f", 32)
	tests := []struct {
		name   string
		values []string
		want   []string
	}{
		{name: "none", values: nil, want: nil},
		{name: "one", values: []string{"sha256=" + a}, want: []string{a}},
		{name: "two", values: []string{"sha256=" + a + " sha256=" + b}, want: []string{a, b}},
		{name: "two lines", values: []string{"sha256=" + a, "sha256=" + b}, want: []string{a, b}},
		{name: "commas and tabs", values: []string{",sha256=" + a + ",\tsha256=" + b + ","}, want: []string{a, b}},
		{name: "upper case", values: []string{"SHA256=" + strings.ToUpper(a)}, want: []string{a}},
		{name: "unknown scheme", values: []string{"v1=" + a + " sha256=" + b}, want: []string{b}},
		{name: "short", values: []string{"sha256=" + a[:62]}, want: nil},
		{name: "long", values: []string{"sha256=" + a + "00"}, want: nil},
		{name: "odd", values: []string{"sha256=" + a + "0"}, want: nil},
		{name: "not hex", values: []string{"sha256=" + strings.Repeat("xy", 32)}, want: nil},
		{name: "no scheme", values: []string{a}, want: nil},
		{name: "colon", values: []string{"sha256:" + a}, want: nil},
		{name: "quoted", values: []string{`"sha256=` + a + `"`}, want: nil},
		{name: "semicolon joined", values: []string{"sha256=" + a + ";sha256=" + b}, want: nil},
		{name: "sixteen examined", values: []string{strings.Repeat("x ", 15) + "sha256=" + a + " sha256=" + b}, want: []string{a}},
		{name: "cap spans lines", values: []string{strings.Repeat("x ", 16), "sha256=" + a}, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, sum := range parseSignatures(tt.values) {
				got = append(got, hex.EncodeToString(sum[:]))
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzParseSignatures checks that any header parses without panic, yields at
// most maxEntries digests, and only digests written in it as sha256 entries.
func FuzzParseSignatures(f *testing.F) {
	f.Add("sha256=" + strings.Repeat("ab", 32))
	f.Add("sha256=" + strings.Repeat("ab", 32) + ", SHA256=" + strings.Repeat("CD", 32))
	f.Add(strings.Repeat("sha256= ", 40))
	f.Fuzz(func(t *testing.T, header string) {
		sums := parseSignatures([]string{header})
		require.LessOrEqual(t, len(sums), maxEntries)
		lower := strings.ToLower(header)
		for _, sum := range sums {
			assert.Contains(t, lower, "sha256="+hex.EncodeToString(sum[:]))
		}
	})
}
