package media

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// pdfTail is how far from the end readers look for %%EOF.
const pdfTail = 1024

// validatePDF checks the header, then the trailer: %%EOF near the end,
// after a startxref whose offset points inside the file at a
// cross-reference table or a cross-reference stream object.
func validatePDF(b []byte) error {
	if len(b) < 8 || !isDigit(b[5]) || b[6] != '.' || !isDigit(b[7]) {
		return errors.New("the header is not %PDF-n.n")
	}
	tail := b[max(0, len(b)-pdfTail):]
	eof := bytes.LastIndex(tail, []byte("%%EOF"))
	if eof < 0 {
		return fmt.Errorf("no %%%%EOF at the end: %w", errTruncated)
	}
	head := b[:len(b)-len(tail)+eof]
	sx := bytes.LastIndex(head, []byte("startxref"))
	if sx < 0 {
		return errors.New("no startxref before %%EOF")
	}
	num := bytes.TrimSpace(head[sx+len("startxref"):])
	off, err := strconv.ParseUint(string(num), 10, 63)
	if err != nil || off >= uint64(len(b)) {
		return errors.New("startxref does not hold an offset inside the file")
	}
	at := bytes.TrimLeft(b[off:], " \t\r\n\f\x00")
	if !bytes.HasPrefix(at, []byte("xref")) && !isObjectStart(at) {
		return errors.New("startxref does not point at a cross-reference")
	}
	return nil
}

// isObjectStart reports whether b starts with "N G obj".
func isObjectStart(b []byte) bool {
	for range 2 {
		n := 0
		for n < len(b) && isDigit(b[n]) {
			n++
		}
		if n == 0 {
			return false
		}
		b = bytes.TrimLeft(b[n:], " \t\r\n\f\x00")
	}
	return bytes.HasPrefix(b, []byte("obj"))
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// validateZIP checks the end of central directory record and the central
// directory it points at, then that every entry's local header is where the
// directory says and its compressed data lies inside the file. The entries
// are not decompressed.
func validateZIP(b []byte) error {
	r, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return fmt.Errorf("no consistent central directory at the end (%w): %w", err, errTruncated)
	}
	for _, f := range r.File {
		off, err := f.DataOffset()
		if err != nil {
			return fmt.Errorf("entry %q: no local header where the directory says", f.Name)
		}
		if off < 0 || uint64(off) > uint64(len(b)) || f.CompressedSize64 > uint64(len(b))-uint64(off) {
			return fmt.Errorf("entry %q: %w", f.Name, errTruncated)
		}
	}
	return nil
}
