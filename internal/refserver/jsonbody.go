package refserver

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// bufferJSONBody reads a POST body whole, before the generated decoder
// does, and refuses one that is not valid UTF-8 or that escapes a lone
// UTF-16 surrogate: encoding/json would replace either by U+FFFD without a
// word, and a prompt would be charged for text the caller never sent. The
// multipart upload is left to its own parser.
func bufferJSONBody(r *http.Request) *apiError {
	if r.Method != http.MethodPost || r.URL.Path == "/v3/files/upload" || r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return invalidf("request body is larger than 1 MiB")
		}
		return invalidf("the body could not be read: %s", err.Error())
	}
	r.Body = io.NopCloser(bytes.NewReader(data))
	if msg := jsonTextProblem(data); msg != "" {
		return invalidf("%s", msg)
	}
	return nil
}

// jsonTextProblem explains why b cannot be JSON text whose strings hold
// only characters, or returns "". Other syntax errors are left to the
// decoder, which words them.
func jsonTextProblem(b []byte) string {
	if !utf8.Valid(b) {
		i := validPrefix(b)
		return "the body is not valid UTF-8 (invalid byte at offset " + strconv.Itoa(i) + "); JSON text must be UTF-8"
	}
	inString := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch c {
		case '"':
			inString = false
		case '\\':
			if i+1 < len(b) && b[i+1] != 'u' {
				i++ // a one-character escape, \" included
				continue
			}
			r, ok := hexRune(b[i+1:])
			if !ok {
				continue // malformed: the decoder says so
			}
			i += 5
			if !utf16.IsSurrogate(r) {
				continue
			}
			if low, ok := hexRune(b[min(i+2, len(b)):]); r < 0xdc00 && i+1 < len(b) && b[i+1] == '\\' && ok && low >= 0xdc00 && low <= 0xdfff {
				i += 6 // a surrogate pair: one character
				continue
			}
			return "the body escapes a lone UTF-16 surrogate (\\u" + strconv.FormatInt(int64(r), 16) + " at offset " + strconv.Itoa(i-5) + "), which is not a character"
		}
	}
	return ""
}

// hexRune reads the four hex digits after the u of a \u escape at the start
// of b ("uXXXX").
func hexRune(b []byte) (rune, bool) {
	if len(b) < 5 || b[0] != 'u' {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[1:5]), 16, 16)
	return rune(v), err == nil
}

// validPrefix returns the length of b's longest valid UTF-8 prefix.
func validPrefix(b []byte) int {
	n := 0
	for n < len(b) {
		r, size := utf8.DecodeRune(b[n:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		n += size
	}
	return n
}
