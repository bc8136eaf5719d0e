package main

import (
	"bufio"
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scanLines is what eachLine must agree with: the lines bufio.ScanLines
// gives, however long.
func scanLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		out = append(out, bytes.TrimSuffix(line, []byte("\r")))
	}
	return out
}

// lines runs eachLine over data with a reader of bufSize bytes, so lines
// cross its buffer, and returns what it gave.
func lines(data []byte, bufSize, limit int) ([]string, error) {
	var got []string
	err := eachLine(bufio.NewReaderSize(bytes.NewReader(data), bufSize), limit, func(_ int, line []byte) error {
		got = append(got, string(line))
		return nil
	})
	return got, err
}

func TestEachLine(t *testing.T) {
	long := strings.Repeat("x", 100)
	for _, tt := range []struct {
		name, in string
		limit    int
		want     []string
		tooLong  *longLineError
	}{
		{name: "empty", in: "", limit: 10},
		{name: "no final newline", in: "a\nb", limit: 10, want: []string{"a", "b"}},
		{name: "final newline", in: "a\nb\n", limit: 10, want: []string{"a", "b"}},
		{name: "crlf", in: "a\r\nb\r\n\r\n", limit: 10, want: []string{"a", "b", ""}},
		{name: "cr at the end", in: "a\r", limit: 10, want: []string{"a"}},
		{name: "at the limit", in: long + "\r\n" + long, limit: 100, want: []string{long, long}},
		{name: "over the limit", in: "a\n\n" + long + "x\r\nb\n", limit: 100, tooLong: &longLineError{line: 3, size: 101, limit: 100}},
		{name: "over at the end", in: "a\n" + long + long, limit: 100, tooLong: &longLineError{line: 2, size: 200, limit: 100}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, bufSize := range []int{16, 4096} {
				got, err := lines([]byte(tt.in), bufSize, tt.limit)
				if tt.tooLong != nil {
					var long *longLineError
					require.ErrorAs(t, err, &long)
					assert.Equal(t, tt.tooLong, long)
					continue
				}
				require.NoError(t, err)
				assert.Equal(t, tt.want, got, "buffer of %d", bufSize)
			}
		})
	}
}

func TestEachLineStopsAtFnError(t *testing.T) {
	stop := errors.New("stop")
	var seen []int
	err := eachLine(bufio.NewReader(strings.NewReader("a\nb\nc\n")), 10, func(n int, _ []byte) error {
		seen = append(seen, n)
		if n == 2 {
			return stop
		}
		return nil
	})
	assert.ErrorIs(t, err, stop)
	assert.Equal(t, []int{1, 2}, seen)
}

// FuzzEachLine checks eachLine against scanLines on any input and limit,
// with a small buffer so that lines and "\r\n" cross its edge.
func FuzzEachLine(f *testing.F) {
	f.Add([]byte("a\nb"), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, limit uint8) {
		got, err := lines(data, 16, int(limit))
		want := scanLines(data)
		first := slices.IndexFunc(want, func(line []byte) bool { return len(line) > int(limit) })
		if first >= 0 {
			var long *longLineError
			require.ErrorAs(t, err, &long)
			require.Equal(t, longLineError{line: first + 1, size: len(want[first]), limit: int(limit)}, *long)
			want = want[:first] // the lines before it were given
		} else {
			require.NoError(t, err)
		}
		require.Len(t, got, len(want))
		for i := range want {
			require.Equal(t, string(want[i]), got[i], "line %d", i+1)
		}
	})
}
