package upload

import "io"

// progressReader reports the running count of bytes read from r.
type progressReader struct {
	r     io.Reader
	sent  int64
	total int64
	fn    func(sent, total int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.sent += int64(n)
		p.fn(p.sent, p.total)
	}
	return n, err
}

// withProgress wraps r to report to fn, or returns r when fn is nil.
func withProgress(r io.Reader, total int64, fn func(sent, total int64)) io.Reader {
	if fn == nil {
		return r
	}
	return &progressReader{r: r, total: total, fn: fn}
}
