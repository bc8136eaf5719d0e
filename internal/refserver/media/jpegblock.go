package media

import (
	"errors"
	"math/bits"
)

// block reads one block's part of a scan. nz is the block's non-zero bits
// in a progressive image, nil in a sequential one.
func (j *jpegCheck) block(nz *uint64, dc, ac *jpegHuffman, start, end int, ah byte) error {
	if ah != 0 {
		return j.refine(nz, ac, start, end)
	}
	zig := start
	if zig == 0 {
		zig++
		t, err := j.huffman(dc)
		if err != nil {
			return err
		}
		if t > 16 {
			return errors.New("excessive DC component")
		}
		if _, err := j.bits(int(t)); err != nil { // the magnitude, not kept
			return err
		}
	}
	if zig <= end && j.eobRun > 0 {
		j.eobRun--
		return nil
	}
	for ; zig <= end; zig++ {
		v, err := j.huffman(ac)
		if err != nil {
			return err
		}
		run, size := int(v>>4), v&0x0f
		if size != 0 {
			zig += run
			if zig > end {
				break
			}
			if _, err := j.bits(int(size)); err != nil {
				return err
			}
			if nz != nil {
				*nz |= 1 << zig
			}
			continue
		}
		if run != 0x0f {
			if err := j.endOfBands(run); err != nil {
				return err
			}
			j.eobRun--
			break
		}
		zig += 0x0f
	}
	return nil
}

// endOfBands reads the length of a run of 2^run or more end-of-bands.
func (j *jpegCheck) endOfBands(run int) error {
	j.eobRun = 1 << run
	if run != 0 {
		extra, err := j.bits(run)
		if err != nil {
			return err
		}
		j.eobRun |= uint16(extra)
	}
	return nil
}

// refine reads a successive-approximation refinement of one block.
func (j *jpegCheck) refine(nz *uint64, ac *jpegHuffman, start, end int) error {
	if start == 0 { // DC: one bit
		_, err := j.bits(1)
		return err
	}
	zig := start
	if j.eobRun == 0 {
		for ; zig <= end; zig++ {
			v, err := j.huffman(ac)
			if err != nil {
				return err
			}
			run, size := int(v>>4), v&0x0f
			newNonZero := false
			switch size {
			case 0:
				if run != 0x0f {
					if err := j.endOfBands(run); err != nil {
						return err
					}
				}
			case 1:
				newNonZero = true
				if _, err := j.bits(1); err != nil {
					return err
				}
			default:
				return errors.New("unexpected Huffman code in a refinement")
			}
			if j.eobRun > 0 {
				break
			}
			if zig, err = j.refineNonZero(nz, zig, end, run); err != nil {
				return err
			}
			if zig > end {
				return errors.New("too many coefficients")
			}
			if newNonZero {
				*nz |= 1 << zig
			}
		}
	}
	if j.eobRun > 0 {
		j.eobRun--
		if _, err := j.refineNonZero(nz, zig, end, -1); err != nil {
			return err
		}
	}
	return nil
}

// refineNonZero reads a correction bit for each non-zero coefficient from
// zig on, and stops at the zeros+1th zero one (never when zeros is -1).
func (j *jpegCheck) refineNonZero(nz *uint64, zig, end, zeros int) (int, error) {
	if zeros < 0 && zig <= end { // a block in an end-of-band run: its bits at once
		band := *nz >> zig & (1<<(end-zig+1) - 1)
		for n := bits.OnesCount64(band); n > 0; n -= min(n, 32) {
			if _, err := j.bits(min(n, 32)); err != nil {
				return 0, err
			}
		}
		return end + 1, nil
	}
	for ; zig <= end; zig++ {
		if *nz&(1<<zig) == 0 {
			if zeros == 0 {
				break
			}
			zeros--
			continue
		}
		if _, err := j.bits(1); err != nil {
			return 0, err
		}
	}
	return zig, nil
}
