// Package redact keeps a secret (the API key) out of what the SDK and the
// command print: error bodies, messages, the command's output. A secret is
// found as it is and in the encodings a body can carry it in: JSON escapes
// (any character as \uXXXX, "/" as "\/") and URL encoding, one inside the
// other. Where it is found only encoded, what carried it is withheld whole,
// since its encoded form cannot be masked in place.
package redact

import (
	"bytes"
	"encoding/hex"
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

// jsonEscapes are the one-letter JSON escapes that stand for another byte;
// the rest (\" \\ \/ and any other) stand for the letter itself.
var jsonEscapes = map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}

// unescapeJSON undoes JSON string escapes wherever they stand, tolerating
// text that is not JSON.
func unescapeJSON(b []byte) []byte {
	if bytes.IndexByte(b, '\\') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' || i+1 == len(b) {
			out = append(out, b[i])
			continue
		}
		i++
		e := b[i]
		r, ok := hexAt(b[i+1:], 4)
		switch {
		case e == 'u' && ok:
			i += 4
			// A surrogate pair stands for one rune.
			if r >= 0xD800 && r < 0xDC00 && i+6 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
				if lo, ok := hexAt(b[i+3:], 4); ok && lo >= 0xDC00 && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					i += 6
				}
			}
			out = utf8.AppendRune(out, r)
		case e == 'u':
			out = append(out, '\\', e)
		case jsonEscapes[e] != 0:
			out = append(out, jsonEscapes[e])
		default:
			out = append(out, e)
		}
	}
	return out
}

// unescapeURL undoes percent-encoding and "+" for space wherever they
// stand, tolerating malformed sequences.
func unescapeURL(b []byte) []byte {
	if bytes.IndexByte(b, '%') < 0 && bytes.IndexByte(b, '+') < 0 {
		return b
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c == '%' {
			if r, ok := hexAt(b[i+1:], 2); ok {
				c = byte(r)
				i += 2
			}
		} else if c == '+' {
			c = ' '
		}
		out = append(out, c)
	}
	return out
}

// hexAt reads the n (2 or 4) hex digits b starts with.
func hexAt(b []byte, n int) (rune, bool) {
	var d [2]byte
	if len(b) < n {
		return 0, false
	}
	if _, err := hex.Decode(d[:n/2], b[:n]); err != nil {
		return 0, false
	}
	if n == 2 {
		return rune(d[0]), true
	}
	return rune(d[0])<<8 | rune(d[1]), true
}
