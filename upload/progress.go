package upload

import "io"

// progress reports the bytes of one upload as they go out, across all its
// attempts. A retried PUT reads the source again from the start; its bytes
// are reported only once they pass what was reported before, so the count a
// caller sees never goes back.
type progress struct {
	fn    func(sent, total int64)
	total int64
	high  int64 // the largest count reported so far
}

// reader wraps the body of one attempt, or returns it as is without fn.
// Attempts run one after the other, never two at once.
func (p *progress) reader(r io.Reader) io.Reader {
	if p.fn == nil {
		return r
	}
	return &progressReader{r: r, p: p}
}

// progressReader counts the bytes read from r in one attempt.
type progressReader struct {
	r    io.Reader
	p    *progress
	sent int64
}

func (pr *progressReader) Read(b []byte) (int, error) {
	n, err := pr.r.Read(b)
	pr.sent += int64(n)
	if pr.sent > pr.p.high && pr.p.fn != nil {
		pr.p.high = pr.sent
		pr.p.fn(pr.sent, pr.p.total)
	}
	return n, err
}
