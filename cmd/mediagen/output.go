package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal, where people read: progress
// bars and status lines go only there.
func isTerminal(w io.Writer) bool {
	f, ok := underlying(w).(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// writeJSON prints v as one line of JSON: the whole answer of a command
// that prints one thing, or one item of a command that goes through many.
func (a *app) writeJSON(v any) error {
	enc := json.NewEncoder(a.stdout)
	enc.SetEscapeHTML(false) // URLs keep their & for people reading along
	return enc.Encode(v)
}

// table writes aligned columns for people.
type table struct{ tw *tabwriter.Writer }

// newTable starts a table on w with the header row, when header is not
// empty.
func newTable(w io.Writer, header ...string) *table {
	t := &table{tw: tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)}
	if len(header) > 0 {
		t.row(header...)
	}
	return t
}

// row adds one row; empty cells show as "-" so that columns stay readable.
// Cells are escaped (see printable), so no tab or newline breaks a row.
func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			c = "-"
		}
		cells[i] = printable(c)
	}
	fmt.Fprintln(t.tw, strings.Join(cells, "\t"))
}

// flush writes the table out.
func (t *table) flush() error { return t.tw.Flush() }

// fields prints name/value pairs, one a line, aligned: one resource for
// people. Pairs with an empty value are left out.
func (a *app) fields(pairs ...string) error {
	t := newTable(a.stdout)
	for i := 0; i+1 < len(pairs); i += 2 {
		if pairs[i+1] != "" {
			t.row(pairs[i], pairs[i+1])
		}
	}
	return t.flush()
}

// printable returns s with every rune that is not printable, as
// strconv.IsPrint says, escaped as Go quotes it (ESC as \x1b, a newline as
// \n, a bidirectional override as \u202e, a byte that is not UTF-8 as
// \xff). Text from the service or a receiver goes through it before
// reaching a terminal, where escape sequences could recolour the screen,
// retitle the window or hide what is shown. Backslashes are kept as they
// are: this is for reading, not for parsing back.
func printable(s string) string { return escape(s, false) }

// printableText is printable for text shown as lines: newlines and tabs
// are kept.
func printableText(s string) string { return escape(s, true) }

func escape(s string, lines bool) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !shownAsIs(r, lines) }) {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		r, size := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[0])
		case shownAsIs(r, lines):
			b.WriteString(s[:size])
		default:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		}
		s = s[size:]
	}
	return b.String()
}

// shownAsIs reports whether r goes to the terminal unescaped.
func shownAsIs(r rune, lines bool) bool {
	return strconv.IsPrint(r) || lines && (r == '\n' || r == '\t')
}

// usd formats an amount of money.
func usd(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) + " USD" }

// when formats a time for a table: local, to the second; "" for zero.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
