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

	"golang.org/x/term"
)

// isTerminal reports whether w is a terminal, where people read: progress
// bars and status lines go only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
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
func (t *table) row(cells ...string) {
	for i, c := range cells {
		if c == "" {
			cells[i] = "-"
		}
		cells[i] = strings.ReplaceAll(cells[i], "\t", " ")
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

// usd formats an amount of money.
func usd(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) + " USD" }

// when formats a time for a table: local, to the second; "" for zero.
func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Local().Format("2006-01-02 15:04:05")
}
