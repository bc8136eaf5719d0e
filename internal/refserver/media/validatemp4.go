package media

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// mp4BoxContainers are the boxes whose bodies are boxes; validation descends
// into them so that every size in the tree is checked. (udta is left out:
// QuickTime ends it with a 32-bit zero that is not a box.)
var mp4BoxContainers = map[string]bool{
	"moov": true, "trak": true, "mdia": true, "minf": true, "stbl": true, "edts": true,
	"dinf": true, "mvex": true, "moof": true, "traf": true, "mfra": true,
}

// maxBoxDepth bounds the descent into nested containers.
const maxBoxDepth = 16

// byteRange is a half-open range of file offsets.
type byteRange struct{ start, end uint64 }

// mp4File is what validation collects from the top level of an ISO BMFF
// file.
type mp4File struct {
	mdats []byteRange // payloads
	moov  []byte
	moofs []mp4Fragment
}

type mp4Fragment struct {
	start uint64 // offset of the moof box, the base of its data offsets
	body  []byte
}

// holds reports whether the bytes [off, off+n) lie inside one mdat.
func (f *mp4File) holds(off, n uint64) bool {
	for _, m := range f.mdats {
		if off >= m.start && off <= m.end && n <= m.end-off {
			return true
		}
	}
	return false
}

// validateMP4 checks that the box tree fills the file exactly, with every
// box inside its parent, that the movie header is there, that the samples
// of every track (or of every fragment) lie inside an mdat of the file, and
// that the duration is known.
func validateMP4(b []byte) error {
	var f mp4File
	if err := checkBoxTree(b, 0); err != nil {
		return err
	}
	_ = walkBoxes(b, func(x mp4Box) bool {
		switch x.typ {
		case "mdat":
			f.mdats = append(f.mdats, byteRange{x.bodyStart(), x.end})
		case "moov":
			f.moov = x.body
		case "moof":
			f.moofs = append(f.moofs, mp4Fragment{x.start, x.body})
		}
		return true
	})
	m, err := parseMovie(b)
	if err != nil {
		return err
	}
	var samples, fragTicks uint64
	err = walkBoxes(f.moov, func(x mp4Box) bool {
		if x.typ != "trak" {
			return true
		}
		var n uint64
		if stbl, ok := boxPath(x.body, "mdia", "minf", "stbl"); ok {
			n, err = f.chunkSamples(stbl)
		}
		samples += n
		return err == nil
	})
	if err != nil {
		return err
	}
	defaults := trackDefaults(f.moov)
	for _, frag := range f.moofs {
		n, ticks, err := f.fragmentSamples(frag, defaults)
		if err != nil {
			return err
		}
		samples += n
		fragTicks += ticks
	}
	if samples == 0 {
		return errors.New("no media samples in an mdat")
	}
	known := m.ticks > 0 || fragTicks > 0
	for _, t := range m.tracks {
		known = known || (t.hasMediaHeader && t.ticks > 0)
	}
	if !known {
		return errors.New("the duration is unknown")
	}
	return nil
}

// checkBoxTree checks that the boxes of a container body fill it exactly,
// and descends into the containers among them.
func checkBoxTree(b []byte, depth int) error {
	if depth > maxBoxDepth {
		return errors.New("boxes nested too deep")
	}
	var err error
	if werr := walkBoxes(b, func(x mp4Box) bool {
		if mp4BoxContainers[x.typ] {
			err = checkBoxTree(x.body, depth+1)
		}
		return err == nil
	}); werr != nil {
		return werr
	}
	return err
}

// table reads a full box's entry count and returns that many entries of
// size bytes each, failing when they are not all present.
func table(box []byte, skip, size int) ([]byte, uint64, error) {
	body, _, ok := fullBoxBody(box)
	if !ok || len(body) < skip+4 {
		return nil, 0, errTruncated
	}
	n := uint64(binary.BigEndian.Uint32(body[skip:]))
	entries := body[skip+4:]
	if n*uint64(size) > uint64(len(entries)) {
		return nil, 0, errors.New("a sample table holds fewer entries than it counts")
	}
	return entries[:n*uint64(size)], n, nil
}

// chunkSamples checks that each chunk of a track's sample table lies in an
// mdat and returns the number of samples.
func (f *mp4File) chunkSamples(stbl []byte) (uint64, error) {
	sizeOf, count, err := sampleSizes(stbl)
	if err != nil || count == 0 {
		return 0, err
	}
	var offsets []uint64
	if stco, ok := findBox(stbl, "stco"); ok {
		e, n, err := table(stco, 0, 4)
		if err != nil {
			return 0, err
		}
		for i := range n {
			offsets = append(offsets, uint64(binary.BigEndian.Uint32(e[4*i:])))
		}
	} else if co64, ok := findBox(stbl, "co64"); ok {
		e, n, err := table(co64, 0, 8)
		if err != nil {
			return 0, err
		}
		for i := range n {
			offsets = append(offsets, binary.BigEndian.Uint64(e[8*i:]))
		}
	}
	stsc, ok := findBox(stbl, "stsc")
	if !ok || len(offsets) == 0 {
		return 0, errors.New("a track has samples but no chunks")
	}
	runs, nRuns, err := table(stsc, 0, 12)
	if err != nil {
		return 0, err
	}
	if nRuns == 0 || binary.BigEndian.Uint32(runs) != 1 {
		return 0, errors.New("the sample-to-chunk table does not start at chunk 1")
	}
	var sample, run uint64
	for c, off := range offsets {
		for run+1 < nRuns && uint64(binary.BigEndian.Uint32(runs[12*(run+1):])) <= uint64(c+1) {
			run++
		}
		per := uint64(binary.BigEndian.Uint32(runs[12*run+4:]))
		take := min(per, count-sample)
		n, err := sizeOf(sample, take)
		if err != nil {
			return 0, err
		}
		if n > 0 && !f.holds(off, n) {
			return 0, fmt.Errorf("chunk %d (%d bytes at byte %d) is not inside an mdat: %w", c+1, n, off, errTruncated)
		}
		sample += take
	}
	if sample < count {
		return 0, errors.New("the sample table has samples in no chunk")
	}
	return count, nil
}

// sampleSizes reads stsz or stz2 and returns the number of samples and a
// function adding up the sizes of n samples from the i-th.
func sampleSizes(stbl []byte) (func(i, n uint64) (uint64, error), uint64, error) {
	if stsz, ok := findBox(stbl, "stsz"); ok {
		body, _, ok := fullBoxBody(stsz)
		if !ok || len(body) < 8 {
			return nil, 0, errTruncated
		}
		if fixed := uint64(binary.BigEndian.Uint32(body)); fixed != 0 {
			count := uint64(binary.BigEndian.Uint32(body[4:]))
			return func(_, n uint64) (uint64, error) { return n * fixed, nil }, count, nil
		}
		e, count, err := table(stsz, 4, 4)
		if err != nil {
			return nil, 0, err
		}
		return func(i, n uint64) (uint64, error) {
			var sum uint64
			for k := i; k < i+n; k++ {
				sum += uint64(binary.BigEndian.Uint32(e[4*k:]))
			}
			return sum, nil
		}, count, nil
	}
	if stz2, ok := findBox(stbl, "stz2"); ok {
		body, _, ok := fullBoxBody(stz2)
		if !ok || len(body) < 8 {
			return nil, 0, errTruncated
		}
		bits := uint64(body[3])
		count := uint64(binary.BigEndian.Uint32(body[4:]))
		e := body[8:]
		if (bits != 4 && bits != 8 && bits != 16) || count*bits > 8*uint64(len(e)) {
			return nil, 0, errors.New("a compact sample size table is cut short")
		}
		return func(i, n uint64) (uint64, error) {
			var sum uint64
			for k := i; k < i+n; k++ {
				switch bits {
				case 4:
					sum += uint64(e[k/2] >> (4 * (1 - k%2)) & 0xf)
				case 8:
					sum += uint64(e[k])
				default:
					sum += uint64(binary.BigEndian.Uint16(e[2*k:]))
				}
			}
			return sum, nil
		}, count, nil
	}
	return nil, 0, nil
}

// trackDefault holds a track's trex defaults for its fragments.
type trackDefault struct{ duration, size uint32 }

// trackDefaults reads the trex boxes of moov/mvex.
func trackDefaults(moov []byte) map[uint32]trackDefault {
	out := map[uint32]trackDefault{}
	mvex, ok := findBox(moov, "mvex")
	if !ok {
		return out
	}
	_ = walkBoxes(mvex, func(x mp4Box) bool {
		if b, _, ok := fullBoxBody(x.body); x.typ == "trex" && ok && len(b) >= 16 {
			out[binary.BigEndian.Uint32(b)] = trackDefault{binary.BigEndian.Uint32(b[8:]), binary.BigEndian.Uint32(b[12:])}
		}
		return true
	})
	return out
}

// fragmentSamples checks that the samples each track run of a movie
// fragment declares lie inside an mdat, and returns their number and their
// total duration in the tracks' ticks.
func (f *mp4File) fragmentSamples(frag mp4Fragment, defaults map[uint32]trackDefault) (samples, ticks uint64, err error) {
	err = walkBoxes(frag.body, func(x mp4Box) bool {
		if x.typ != "traf" {
			return true
		}
		tfhd, ok := findBox(x.body, "tfhd")
		body, flags, ok2 := fullBoxBody(tfhd)
		if !ok || !ok2 || len(body) < 4 {
			err = errors.New("a track fragment without a header")
			return false
		}
		def := defaults[binary.BigEndian.Uint32(body)]
		base, hasSize := frag.start, def.size != 0
		rest := body[4:]
		for _, field := range []struct {
			bit  uint32
			size int
			into func([]byte)
		}{
			{0x01, 8, func(v []byte) { base = binary.BigEndian.Uint64(v) }},
			{0x02, 4, nil},
			{0x08, 4, func(v []byte) { def.duration = binary.BigEndian.Uint32(v) }},
			{0x10, 4, func(v []byte) { def.size, hasSize = binary.BigEndian.Uint32(v), true }},
			{0x20, 4, nil},
		} {
			if flags&field.bit == 0 {
				continue
			}
			if len(rest) < field.size {
				err = errTruncated
				return false
			}
			if field.into != nil {
				field.into(rest)
			}
			rest = rest[field.size:]
		}
		next := base
		_ = walkBoxes(x.body, func(y mp4Box) bool {
			if y.typ != "trun" {
				return true
			}
			var n, d uint64
			n, d, next, err = f.trackRun(y.body, base, next, def, hasSize)
			samples += n
			ticks += d
			return err == nil
		})
		return err == nil
	})
	return samples, ticks, err
}

// trackRun checks one trun box: its samples, from the data offset it
// declares (or where the previous run ended), must lie inside an mdat when
// their sizes are known. It returns the samples, their ticks and where the
// run's data ends.
func (f *mp4File) trackRun(trun []byte, base, next uint64, def trackDefault, hasSize bool) (n, ticks, end uint64, err error) {
	body, flags, ok := fullBoxBody(trun)
	if !ok || len(body) < 4 {
		return 0, 0, 0, errTruncated
	}
	n, body = uint64(binary.BigEndian.Uint32(body)), body[4:]
	start := next
	if flags&0x01 != 0 {
		if len(body) < 4 {
			return 0, 0, 0, errTruncated
		}
		start = base + uint64(int64(int32(binary.BigEndian.Uint32(body))))
		body = body[4:]
	}
	if flags&0x04 != 0 {
		if len(body) < 4 {
			return 0, 0, 0, errTruncated
		}
		body = body[4:]
	}
	entry := 0
	for _, bit := range []uint32{0x100, 0x200, 0x400, 0x800} {
		if flags&bit != 0 {
			entry += 4
		}
	}
	if n*uint64(entry) > uint64(len(body)) {
		return 0, 0, 0, errors.New("a track run holds fewer samples than it counts")
	}
	var size uint64
	if entry == 0 {
		size, ticks = n*uint64(def.size), n*uint64(def.duration)
	} else {
		for i := range n {
			e := body[i*uint64(entry):]
			d := uint64(def.duration)
			if flags&0x100 != 0 {
				d, e = uint64(binary.BigEndian.Uint32(e)), e[4:]
			}
			ticks += d
			if flags&0x200 != 0 {
				size += uint64(binary.BigEndian.Uint32(e))
			} else {
				size += uint64(def.size)
			}
		}
	}
	if (hasSize || flags&0x200 != 0) && size > 0 && !f.holds(start, size) {
		return 0, 0, 0, fmt.Errorf("a track run's %d bytes at byte %d are not inside an mdat: %w", size, start, errTruncated)
	}
	return n, ticks, start + size, nil
}
