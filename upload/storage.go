package upload

import (
	"errors"
	"io"
)

// maxReservations bounds one upload's reservations (a URL may expire).
const maxReservations = 3

// errSeek is the error of a seek other than a rewind to the start.
var errSeek = errors.New("upload: the body can only be rewound to its start")

// body is what one reservation's PUT reads, the source opened at the
// first Read.
type body struct {
	src  *source
	prog *progress
	r    io.Reader
}

// rewindableBody is a body the client can rewind to retry.
type rewindableBody struct{ body }

// newBody returns the body of a PUT, an io.Seeker only when src is rereadable.
func newBody(src *source, prog *progress) io.Reader {
	b := body{src: src, prog: prog}
	if src.rereadable {
		return &rewindableBody{b}
	}
	return &b
}

func (b *body) Read(p []byte) (int, error) {
	if b.r == nil {
		r, err := b.src.open()
		if err != nil {
			return 0, err
		}
		b.r = b.prog.reader(&exactReader{r: r, size: b.src.size, strict: b.src.strict})
	}
	return b.r.Read(p)
}

// Seek supports what the client asks: the current offset (0) and a rewind.
func (b *rewindableBody) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence == io.SeekEnd {
		return 0, errSeek
	}
	if whence == io.SeekStart {
		b.r = nil
	}
	return 0, nil
}

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
