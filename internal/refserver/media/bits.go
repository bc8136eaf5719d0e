package media

// bitWriter appends bits most significant first, as H.264 and FLAC both
// read them.
type bitWriter struct {
	buf  []byte
	acc  uint64 // pending bits, right-aligned
	nacc uint   // how many bits acc holds (< 8 after each call)
}

// u writes the n low bits of v (n <= 32).
func (w *bitWriter) u(n uint, v uint32) {
	w.acc = w.acc<<n | uint64(v)&(1<<n-1)
	w.nacc += n
	for w.nacc >= 8 {
		w.nacc -= 8
		w.buf = append(w.buf, byte(w.acc>>w.nacc))
	}
}

// flag writes one bit.
func (w *bitWriter) flag(b bool) {
	if b {
		w.u(1, 1)
	} else {
		w.u(1, 0)
	}
}

// ue writes v as an unsigned Exp-Golomb code: as many zeros as v+1 has
// bits after its leading one, then v+1 itself.
func (w *bitWriter) ue(v uint32) {
	x := uint64(v) + 1
	n := uint(0)
	for x>>n > 1 {
		n++
	}
	if n >= 16 {
		w.u(n, 0)
		w.u(n+1, uint32(x))
		return
	}
	w.u(2*n+1, uint32(x))
}

// se writes v as a signed Exp-Golomb code (1, -1, 2, -2, ... map to 1, 2,
// 3, 4, ...).
func (w *bitWriter) se(v int32) {
	if v > 0 {
		w.ue(uint32(2*v - 1))
	} else {
		w.ue(uint32(-2 * v))
	}
}

// padZeros fills the current byte with zero bits.
func (w *bitWriter) padZeros() {
	if w.nacc > 0 {
		w.u(8-w.nacc, 0)
	}
}

// trailing writes rbsp_trailing_bits: a one, then zeros to the byte end.
func (w *bitWriter) trailing() {
	w.u(1, 1)
	w.padZeros()
}

// bytes returns what was written; the writer must be byte aligned.
func (w *bitWriter) bytes() []byte {
	if w.nacc != 0 {
		panic("media: bitWriter not byte aligned")
	}
	return w.buf
}

// reset empties the writer and keeps its buffer.
func (w *bitWriter) reset() {
	w.buf, w.acc, w.nacc = w.buf[:0], 0, 0
}

// appendNAL appends a NAL unit with a 4-byte length prefix (the MP4 sample
// format) to dst: the header byte, then the RBSP with an emulation
// prevention byte after every two zeros that precede a byte <= 3, so the
// payload never looks like a start code.
func appendNAL(dst []byte, refIdc, typ byte, rbsp []byte) []byte {
	at := len(dst)
	dst = append(dst, 0, 0, 0, 0, refIdc<<5|typ)
	zeros := 0
	for _, b := range rbsp {
		if zeros >= 2 && b <= 3 {
			dst = append(dst, 3)
			zeros = 0
		}
		dst = append(dst, b)
		if b == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	n := len(dst) - at - 4
	dst[at], dst[at+1], dst[at+2], dst[at+3] = byte(n>>24), byte(n>>16), byte(n>>8), byte(n)
	return dst
}
