package refserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/mediagen/mediagen-go/internal/api"
)

// bufferJSONBody reads a POST body whole, before the generated decoder
// does, and refuses one that is not valid UTF-8 or that escapes a lone
// UTF-16 surrogate: encoding/json would replace either by U+FFFD without a
// word, and a prompt would be charged for text the caller never sent. It
// also refuses a JSON value followed by more than white space. The
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
	// The generated decoder reads the first value and ignores the rest, so
	// a body with more after it would be accepted (and charged) as if it
	// were JSON text.
	if !json.Valid(data) {
		dec := json.NewDecoder(bytes.NewReader(data))
		var first json.RawMessage
		if dec.Decode(&first) == nil {
			return invalidf("the body is not valid JSON: more follows its first value (at byte %d)", dec.InputOffset())
		}
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

// requestError answers a body the generated decoder refused with 400. A
// body over the cap is a bad argument too: the interface document keeps 413
// for the bytes of a signed upload request.
func requestError(w http.ResponseWriter, r *http.Request, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		if r.URL.Path == "/v3/files/upload" {
			writeError(w, invalidf("the upload is over %d files of %d bytes", maxFilesPerBatch, maxFileSize))
			return
		}
		writeError(w, invalidf("request body is larger than 1 MiB"))
		return
	}
	if r.URL.Path == "/v3/files/upload-url" && hugeBytes(err) {
		writeError(w, newError(http.StatusRequestEntityTooLarge, api.ErrorCodePayloadTooLarge, "bytes is over 30 MB (%d bytes)", maxFileSize))
		return
	}
	writeError(w, invalidf("%s", describeDecodeError(err)))
}

// hugeBytes reports whether err is the decoder refusing a bytes value that
// is a whole number too large for an integer: a size above 30 MB, 413 like
// any other, rather than a malformed one.
func hugeBytes(err error) bool {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) || typeErr.Field != "bytes" {
		return false
	}
	num, ok := strings.CutPrefix(typeErr.Value, "number ")
	if !ok {
		return false
	}
	f, _, perr := big.ParseFloat(num, 10, 256, big.ToNearestEven)
	return perr == nil && f.IsInt() && f.Cmp(big.NewFloat(maxFileSize)) > 0
}

// describeDecodeError words a JSON decoding error in the terms of the
// request rather than of Go types.
func describeDecodeError(err error) string {
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Sprintf("%s must be %s, not a JSON %s", typeErr.Field, jsonKind(typeErr.Type), typeErr.Value)
	case errors.As(err, &typeErr):
		return fmt.Sprintf("the body must be a JSON object, not a JSON %s", typeErr.Value)
	case errors.As(err, &syntaxErr):
		return fmt.Sprintf("the body is not valid JSON (at byte %d)", syntaxErr.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the body is empty or cut short"
	}
	return "malformed request body: " + err.Error()
}

// jsonKind names the JSON type a Go type is decoded from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

// clampPageSize rewrites a limit of GET /v3/generations that is a whole
// number beyond int64, which the generated binder would refuse, to one that
// means the same: the interface document clamps values above 100 rather
// than reject them, however large, and values below 1 take the default.
func clampPageSize(r *http.Request) {
	if r.Method != http.MethodGet || r.URL.Path != "/v3/generations" {
		return
	}
	q := r.URL.Query()
	v := q.Get("limit")
	if _, err := strconv.ParseInt(v, 10, 64); !errors.Is(err, strconv.ErrRange) {
		return
	}
	q.Set("limit", strconv.Itoa(maxPageSize))
	if strings.HasPrefix(v, "-") {
		q.Set("limit", "0")
	}
	r.URL.RawQuery = q.Encode()
}

// parameterError answers a path or query parameter the generated binder
// refused.
func parameterError(w http.ResponseWriter, _ *http.Request, err error) {
	writeError(w, invalidf("%s", err.Error()))
}
