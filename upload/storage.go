package upload

import (
	"io"
)

// maxReservations bounds the reservations of one upload: the first and two
// fresh ones after refusals (an expired signed URL).
const maxReservations = 3

// body is what one reservation's PUT reads: the source, held to its exact
// size, reporting progress. The source is opened at the first Read.
type body struct {
	src  *source
	prog *progress
	r    io.Reader
}

// rewindableBody is a body whose source can be read again: the client
// rewinds it (Seek to 0) to retry a PUT from the start.
type rewindableBody struct{ body }

// newBody returns the body of a PUT, an io.Seeker when src can be read
// again, so that the client retries only what it can send again.
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

// Seek supports what the client asks of a body: the current offset before
// the first attempt (0), and a rewind to the start, which opens the source
// again at the next Read.
func (b *rewindableBody) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence == io.SeekEnd {
		return 0, errSeek
	}
	if whence == io.SeekStart {
		b.r = nil
	}
	return 0, nil
}
