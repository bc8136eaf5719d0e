package media

import "errors"

// scan checks a start-of-scan header at j.pos and reads the scan's data.
func (j *jpegCheck) scan(s []byte) error {
	if j.comps == nil {
		return errors.New("missing SOF marker")
	}
	n := len(s)
	if n < 6 || n > 4+2*len(j.comps) || n%2 != 0 {
		return errors.New("SOS has wrong length")
	}
	nc := int(s[0])
	if n != 4+2*nc {
		return errors.New("SOS length inconsistent with number of components")
	}
	type scanComp struct {
		c      int
		dc, ac byte
	}
	sc := make([]scanComp, nc)
	totalHV := 0
	for i := range sc {
		c := -1
		for k, comp := range j.comps {
			if comp.id == s[1+2*i] {
				c = k
			}
		}
		if c < 0 {
			return errors.New("unknown component selector")
		}
		for _, o := range sc[:i] {
			if o.c == c {
				return errors.New("repeated component selector")
			}
		}
		sc[i] = scanComp{c: c, dc: s[2+2*i] >> 4, ac: s[2+2*i] & 0x0f}
		if sc[i].dc > 3 || sc[i].ac > 3 || (j.baseline && (sc[i].dc > 1 || sc[i].ac > 1)) {
			return errors.New("bad Huffman table selector")
		}
		totalHV += j.comps[c].h * j.comps[c].v
	}
	if len(j.comps) > 1 && totalHV > 10 {
		return errors.New("total sampling factors too large")
	}
	start, end, ah, al := 0, 63, byte(0), byte(0)
	if j.progressive {
		start, end = int(s[1+2*nc]), int(s[2+2*nc])
		ah, al = s[3+2*nc]>>4, s[3+2*nc]&0x0f
		if (start == 0 && end != 0) || start > end || end > 63 {
			return errors.New("bad spectral selection bounds")
		}
		if start != 0 && nc != 1 {
			return errors.New("progressive AC coefficients for more than one component")
		}
		if ah != 0 && ah != al+1 {
			return errors.New("bad successive approximation values")
		}
	}
	if j.scans++; j.scans > maxJPEGScans {
		return errJPEGScans
	}
	mxx, myy := j.mcus()
	if j.progressive {
		for _, c := range sc {
			if j.nonZero[c.c] == nil {
				if err := j.allocate(c.c); err != nil {
					return err
				}
			}
		}
	}

	j.acc, j.n = 0, 0
	mcu, rst, blocks := 0, byte(0xd0), 0
	for my := range myy {
		for mx := range mxx {
			for _, c := range sc {
				comp := j.comps[c.c]
				for k := range comp.h * comp.v {
					var bx, by int
					if nc != 1 {
						bx, by = comp.h*mx+k%comp.h, comp.v*my+k/comp.h
					} else {
						// A lone component is read block by block, row by
						// row, and only blocks inside the picture are coded.
						q := mxx * comp.h
						bx, by = blocks%q, blocks/q
						blocks++
						if bx*8 >= j.width || by*8 >= j.height {
							continue
						}
					}
					var nz *uint64
					if j.progressive {
						nz = &j.nonZero[c.c][by*mxx*comp.h+bx]
					}
					if err := j.block(nz, &j.huff[0][c.dc], &j.huff[1][c.ac], start, end, ah); err != nil {
						return err
					}
				}
			}
			mcu++
			if j.restart > 0 && mcu%j.restart == 0 && mcu < mxx*myy {
				j.unread()
				if err := j.findRestart(rst); err != nil {
					return err
				}
				rst = 0xd0 + (rst-0xd0+1)%8
				j.acc, j.n = 0, 0
				j.eobRun = 0
			}
		}
	}
	j.unread()
	return nil
}

// unread gives back the last byte read into the bits when a whole byte of
// them is left unused, as image/jpeg does before it reads a marker.
func (j *jpegCheck) unread() {
	if j.n >= 8 {
		j.pos -= j.last
	}
	j.last = 0
}

// allocate makes the non-zero bits of component c, a word a block. The
// first call reserves the memory of every component's bits.
func (j *jpegCheck) allocate(c int) error {
	mxx, myy := j.mcus()
	if j.reserve != nil && j.release == nil {
		mcus := int64(mxx) * int64(myy)
		size := int64(0)
		for _, comp := range j.comps {
			size += 8 * mcus * int64(comp.h*comp.v)
		}
		release, err := j.reserve(size)
		if err != nil {
			return err
		}
		j.release = release
	}
	j.nonZero[c] = make([]uint64, mxx*myy*j.comps[c].h*j.comps[c].v)
	return nil
}

// findRestart reads the restart marker rst that must follow an interval,
// skipping to it as image/jpeg does when it is not next: any other marker
// is an error.
func (j *jpegCheck) findRestart(rst byte) error {
	for {
		if len(j.b)-j.pos < 2 {
			return errTruncated
		}
		a, b := j.b[j.pos], j.b[j.pos+1]
		switch {
		case a == 0xff && b == rst:
			j.pos += 2
			return nil
		case a == 0xff && b == 0xff, a != 0xff && b == 0xff:
			j.pos++
		case a == 0xff && b != 0:
			return errors.New("bad restart marker")
		default:
			j.pos += 2
		}
	}
}
