package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPrintable(t *testing.T) {
	for _, tt := range []struct{ in, want, text string }{
		{in: "gen_1 done", want: "gen_1 done"},
		{in: "Café ☕ 日本", want: "Café ☕ 日本"},
		{in: `C:\out\a.png`, want: `C:\out\a.png`},
		{in: "\x1b[31mred\x1b[0m", want: `\x1b[31mred\x1b[0m`},
		{in: "\x1b]0;title\x07", want: `\x1b]0;title\a`},
		{in: "a\tb\nc\rd", want: `a\tb\nc\rd`, text: "a\tb\nc\\rd"},
		{in: "csi \u009b31m", want: `csi \u009b31m`},
		{in: "evil\u202etxt.exe", want: `evil\u202etxt.exe`},
		{in: "bad \xff\xfe utf-8", want: `bad \xff\xfe utf-8`},
		{in: "real \ufffd kept", want: "real \ufffd kept"},
		{in: "nul \x00", want: `nul \x00`},
	} {
		t.Run(tt.want, func(t *testing.T) {
			assert.Equal(t, tt.want, printable(tt.in))
			text := tt.text
			if text == "" {
				text = tt.want
			}
			assert.Equal(t, text, printableText(tt.in))
		})
	}
}
