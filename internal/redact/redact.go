// Package redact keeps a secret (the API key) out of what the SDK and the
// command print: error bodies, messages, the command's output. A secret is
// found as it is and in the encodings a body can carry it in: JSON escapes
// (any character as \uXXXX, "/" as "\/") and URL encoding, one inside the
// other. Where it is found only encoded, what carried it is withheld whole,
// since its encoded form cannot be masked in place.
package redact

import (
	"bytes"
	"strings"
	"unicode/utf8"
)

// Mask replaces what stands for the secret.
const Mask = "[redacted]"

// Withheld replaces a text that carried the secret in an encoded form.
const Withheld = "[withheld: it carried the API key]"

// minSecret is the shortest secret masked: shorter ones would mangle
// ordinary words, and no real key is that short.
const minSecret = 6

// Bytes returns b without secret: masked where it appears as it is,
// withheld whole where it appears only encoded.
func Bytes(b []byte, secret string) []byte {
	if len(secret) < minSecret {
		return b
	}
	if bytes.Contains(b, []byte(secret)) {
		b = bytes.ReplaceAll(b, []byte(secret), []byte(Mask))
	}
	if Carries(b, secret) {
		return []byte(Withheld)
	}
	return b
}

// String is [Bytes] for a string.
func String(s, secret string) string {
	if len(secret) < minSecret || !strings.Contains(s, secret) && !Carries([]byte(s), secret) {
		return s
	}
	return string(Bytes([]byte(s), secret))
}

// Carries reports whether b holds secret as it is or in any of the
// encodings of the package comment.
func Carries(b []byte, secret string) bool {
	if len(secret) < minSecret {
		return false
	}
	s := []byte(secret)
	if bytes.Contains(b, s) {
		return true
	}
	j, u := unescapeJSON(b), unescapeURL(b)
	return bytes.Contains(j, s) || bytes.Contains(u, s) ||
		bytes.Contains(unescapeURL(j), s) || bytes.Contains(unescapeJSON(u), s)
}

// unescapeJSON undoes JSON string escapes wherever they stand, tolerating
// text that is not JSON.
func unescapeJSON(b []byte) []byte {
	if bytes.IndexByte(b, '\\') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 == len(b) {
			out = append(out, c)
			continue
		}
		i++
		switch e := b[i]; e {
		case 'u':
			if r, ok := hex4(b[i+1:]); ok {
				i += 4
				// A surrogate pair stands for one rune.
				if r >= 0xD800 && r < 0xDC00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
					if lo, ok := hex4(b[i+3:]); ok && lo >= 0xDC00 && lo < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
						i += 6
					}
				}
				out = utf8.AppendRune(out, r)
			} else {
				out = append(out, '\\', e)
			}
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		default: // \" \\ \/ and anything else stand for themselves
			out = append(out, e)
		}
	}
	return out
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	hi, ok1 := hex2(b[0], b[1])
	lo, ok2 := hex2(b[2], b[3])
	return rune(hi)<<8 | rune(lo), ok1 && ok2
}

// unescapeURL undoes percent-encoding and "+" for space wherever they
// stand, tolerating malformed sequences.
func unescapeURL(b []byte) []byte {
	if bytes.IndexByte(b, '%') < 0 && bytes.IndexByte(b, '+') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '%' && i+2 < len(b):
			if r, ok := hex2(b[i+1], b[i+2]); ok {
				out = append(out, r)
				i += 2
				continue
			}
			out = append(out, c)
		case c == '+':
			out = append(out, ' ')
		default:
			out = append(out, c)
		}
	}
	return out
}

func hex2(a, b byte) (byte, bool) {
	x, ok1 := hexVal(a)
	y, ok2 := hexVal(b)
	return x<<4 | y, ok1 && ok2
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
