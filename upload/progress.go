package upload

import "io"

// progress reports the bytes of one upload, across its attempts, only
// once they pass what was reported, so the count never goes back.
type progress struct {
	fn    func(sent, total int64)
	total int64
	high  int64
}

// reader counts the body of one attempt; attempts never overlap.
func (p *progress) reader(r io.Reader) io.Reader {
	if p.fn == nil {
		return r
	}
	return &progressReader{r: r, p: p}
}

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
