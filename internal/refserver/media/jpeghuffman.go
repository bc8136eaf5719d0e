package media

import "errors"

// jpegHuffman is a canonical Huffman table: an 8-bit look-up table for the
// short codes, and the first code and value index of each length.
type jpegHuffman struct {
	n       int
	lut     [256]uint16 // value<<8 | (length+1), 0 when the code is longer than 8 bits
	vals    [256]byte
	minCode [16]int32
	maxCode [16]int32 // -1: no code of this length
	index   [16]int32
}

// tables reads a DHT segment into j.huff.
func (j *jpegCheck) tables(s []byte) error {
	for len(s) > 0 {
		if len(s) < 17 {
			return errors.New("DHT has wrong length")
		}
		class, id := s[0]>>4, s[0]&0x0f
		if class > 1 || id > 3 || (j.baseline && id > 1) {
			return errors.New("bad Huffman table class or index")
		}
		h := &j.huff[class][id]
		counts := s[1:17]
		h.n = 0
		for _, c := range counts {
			h.n += int(c)
		}
		if h.n == 0 || h.n > 256 {
			return errors.New("bad Huffman table size")
		}
		if len(s) < 17+h.n {
			return errors.New("DHT has wrong length")
		}
		copy(h.vals[:], s[17:17+h.n])
		s = s[17+h.n:]
		// The look-up table is filled as image/jpeg fills it, over-full
		// tables included, so that both read the same codes.
		clear(h.lut[:])
		var code, x uint32
		for length := range uint32(8) {
			code <<= 1
			for range counts[length] {
				base := uint8(code << (7 - length))
				v := uint16(h.vals[x])<<8 | uint16(length+2)
				for k := range uint8(1 << (7 - length)) {
					h.lut[base|k] = v
				}
				code++
				x++
			}
		}
		var c, index int32
		for i, n := range counts {
			if n == 0 {
				h.minCode[i], h.maxCode[i], h.index[i] = -1, -1, -1
			} else {
				h.minCode[i], h.maxCode[i], h.index[i] = c, c+int32(n)-1, index
				c += int32(n)
				index += int32(n)
			}
			c <<= 1
		}
	}
	return nil
}

// fill adds one byte of entropy-coded data to the bits, undoing the 0xff
// 0x00 stuffing; at a marker or the end of the file it adds nothing.
func (j *jpegCheck) fill() error {
	if j.pos >= len(j.b) {
		return errJPEGShortData
	}
	c := j.b[j.pos]
	if c == 0xff {
		if j.pos+1 >= len(j.b) {
			return errJPEGShortData
		}
		if j.b[j.pos+1] != 0 {
			return errJPEGMarker
		}
		j.pos++
		j.last = 2
	} else {
		j.last = 1
	}
	j.pos++
	j.acc = j.acc<<8 | uint64(c)
	j.n += 8
	return nil
}

// bits reads n bits.
func (j *jpegCheck) bits(n int) (uint32, error) {
	for j.n < n {
		if err := j.fill(); err != nil {
			return 0, err
		}
	}
	j.n -= n
	return uint32(j.acc>>j.n) & (1<<n - 1), nil
}

// huffman reads one Huffman-coded value.
func (j *jpegCheck) huffman(h *jpegHuffman) (byte, error) {
	if h.n == 0 {
		return 0, errors.New("a scan uses a Huffman table that was never defined")
	}
	if j.n < 8 {
		_ = j.fill() // at the end of the data, the bits left may still hold a code
	}
	if j.n >= 8 {
		if v := h.lut[byte(j.acc>>(j.n-8))]; v != 0 {
			j.n -= int(v&0xff) - 1
			return byte(v >> 8), nil
		}
	}
	var code int32
	for i := range 16 {
		bit, err := j.bits(1)
		if err != nil {
			return 0, err
		}
		code |= int32(bit)
		if code <= h.maxCode[i] {
			return h.vals[h.index[i]+code-h.minCode[i]], nil
		}
		code <<= 1
	}
	return 0, errors.New("bad Huffman code")
}
