package media

import "errors"

// jpegComponent is a frame component as the scans need it.
type jpegComponent struct {
	id   byte
	h, v int
}

// frame checks a start-of-frame segment: 8-bit samples, one, three or
// four components with sampling factors image/jpeg supports.
func (j *jpegCheck) frame(s []byte) error {
	if j.comps != nil {
		return errors.New("multiple SOF markers")
	}
	nc := 0
	switch len(s) {
	case 6 + 3*1:
		nc = 1
	case 6 + 3*3:
		nc = 3
	case 6 + 3*4:
		nc = 4
	default:
		return errors.New("unsupported number of components")
	}
	if s[0] != 8 {
		return errors.New("unsupported precision")
	}
	j.height, j.width = int(s[1])<<8|int(s[2]), int(s[3])<<8|int(s[4])
	if int(s[5]) != nc {
		return errors.New("SOF has wrong length")
	}
	j.comps = make([]jpegComponent, nc)
	for i := range j.comps {
		c := &j.comps[i]
		c.id = s[6+3*i]
		for _, o := range j.comps[:i] {
			if o.id == c.id {
				return errors.New("repeated component identifier")
			}
		}
		if s[8+3*i] > 3 {
			return errors.New("bad quantization table index")
		}
		hv := s[7+3*i]
		c.h, c.v = int(hv>>4), int(hv&0x0f)
		if c.h < 1 || c.h > 4 || c.v < 1 || c.v > 4 || c.h == 3 || c.v == 3 {
			return errors.New("unsupported sampling factors")
		}
		ok := true
		switch nc {
		case 1:
			c.h, c.v = 1, 1 // a single component is never interleaved
		case 3:
			switch i {
			case 0:
				ok = c.v != 4
			case 1:
				ok = j.comps[0].h%c.h == 0 && j.comps[0].v%c.v == 0
			case 2:
				ok = c.h == j.comps[1].h && c.v == j.comps[1].v
			}
		case 4:
			switch i {
			case 0:
				ok = hv == 0x11 || hv == 0x22
			case 1, 2:
				ok = hv == 0x11
			case 3:
				ok = c.h == j.comps[0].h && c.v == j.comps[0].v
			}
		}
		if !ok {
			return errors.New("unsupported sampling factors")
		}
	}
	return nil
}

// mcus returns the columns and rows of MCUs, which the first component's
// sampling factors size.
func (j *jpegCheck) mcus() (mxx, myy int) {
	h0, v0 := j.comps[0].h, j.comps[0].v
	return (j.width + 8*h0 - 1) / (8 * h0), (j.height + 8*v0 - 1) / (8 * v0)
}

// quantTables checks a DQT segment's table sizes.
func quantTables(s []byte) error {
	for len(s) > 0 {
		pq, tq := s[0]>>4, s[0]&0x0f
		s = s[1:]
		if tq > 3 {
			return errors.New("bad quantization table index")
		}
		size := 64
		switch pq {
		case 0:
		case 1:
			size = 128
		default:
			return errors.New("bad quantization table precision")
		}
		if len(s) < size {
			break // image/jpeg takes a last table cut to nothing
		}
		s = s[size:]
	}
	if len(s) != 0 {
		return errors.New("DQT has wrong length")
	}
	return nil
}
