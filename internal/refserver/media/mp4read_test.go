package media

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// readTrack is what the tests read back from one trak of a file MP4
// writes, with the sample bytes found through stsc and stco.
type readTrack struct {
	handler       string
	width, height int // tkhd
	scale, ticks  uint64
	entry         string // sample entry type
	entryBody     []byte
	deltas        []uint32 // per sample, from stts
	sync          []uint32 // stss, nil when absent
	samples       [][]byte
}

// readMP4 parses the tracks of b the way a demuxer does: sizes from stsz,
// chunks from stsc and stco, durations from stts.
func readMP4(t *testing.T, b []byte) []readTrack {
	t.Helper()
	moov, ok := findBox(b, "moov")
	require.True(t, ok, "moov")
	var tracks []readTrack
	require.NoError(t, walkBoxes(moov, func(x mp4Box) bool {
		if x.typ == "trak" {
			tracks = append(tracks, readTrak(t, b, x.body))
		}
		return true
	}))
	return tracks
}

func readTrak(t *testing.T, file, trak []byte) readTrack {
	t.Helper()
	p := parseTrack(trak)
	r := readTrack{handler: p.handler, width: p.width, height: p.height, scale: p.scale, ticks: p.ticks}
	stbl, ok := boxPath(trak, "mdia", "minf", "stbl")
	require.True(t, ok, "stbl")
	body := func(typ string) []byte {
		b, ok := findBox(stbl, typ)
		if !ok {
			return nil
		}
		return b[4:] // version and flags
	}
	stsd := body("stsd")
	require.NotNil(t, stsd)
	require.NoError(t, walkBoxes(stsd[4:], func(x mp4Box) bool {
		r.entry, r.entryBody = x.typ, x.body
		return false
	}))
	stts := body("stts")
	for i := range int(be32(stts)) {
		n, d := be32(stts[4+8*i:]), be32(stts[8+8*i:])
		for range n {
			r.deltas = append(r.deltas, d)
		}
	}
	if stss := body("stss"); stss != nil {
		r.sync = []uint32{}
		for i := range int(be32(stss)) {
			r.sync = append(r.sync, be32(stss[4+4*i:]))
		}
	}
	stsz, stsc, stco := body("stsz"), body("stsc"), body("stco")
	require.Zero(t, be32(stsz), "sizes listed one by one")
	count := int(be32(stsz[4:]))
	chunks := int(be32(stco))
	sample := 0
	for c := range chunks {
		// The stsc entry that covers chunk c+1.
		per := uint32(0)
		for e := range int(be32(stsc)) {
			if be32(stsc[4+12*e:]) <= uint32(c+1) {
				per = be32(stsc[8+12*e:])
			}
		}
		off := int(be32(stco[4+4*c:]))
		for range per {
			size := int(be32(stsz[8+4*sample:]))
			require.LessOrEqual(t, off+size, len(file), "sample %d inside the file", sample)
			r.samples = append(r.samples, file[off:off+size])
			off += size
			sample++
		}
	}
	require.Equal(t, count, sample, "stsc and stco reach every sample")
	require.Len(t, r.deltas, count, "stts covers every sample")
	return r
}

func be32(b []byte) uint32 { return binary.BigEndian.Uint32(b) }

// child returns the body of the box typ inside a sample entry body, after
// the fixed fields of size skip.
func child(t *testing.T, entryBody []byte, skip int, typ string) []byte {
	t.Helper()
	b, ok := findBox(entryBody[skip:], typ)
	require.True(t, ok, typ)
	return b
}

// bitReader reads the bits bitWriter writes, for checking headers.
type bitReader struct {
	b   []byte
	pos int
}

func (r *bitReader) u(n int) uint32 {
	var v uint32
	for range n {
		v = v<<1 | uint32(r.b[r.pos/8]>>(7-r.pos%8)&1)
		r.pos++
	}
	return v
}

func (r *bitReader) ue() uint32 {
	zeros := 0
	for r.u(1) == 0 {
		zeros++
	}
	return 1<<zeros - 1 + r.u(zeros)
}

func (r *bitReader) se() int32 {
	v := r.ue()
	if v%2 == 1 {
		return int32(v+1) / 2
	}
	return -int32(v / 2)
}

// unescape removes emulation prevention bytes from a NAL unit.
func unescape(nal []byte) []byte {
	var out []byte
	zeros := 0
	for _, c := range nal {
		if zeros >= 2 && c == 3 {
			zeros = 0
			continue
		}
		out = append(out, c)
		if c == 0 {
			zeros++
		} else {
			zeros = 0
		}
	}
	return out
}

// spsSize reads the displayed picture size and profile from an SPS NAL
// unit of a Baseline stream.
func spsSize(t *testing.T, nal []byte) (profile, width, height int) {
	t.Helper()
	r := &bitReader{b: unescape(nal[1:])}
	profile = int(r.u(8))
	r.u(16) // constraints, level
	r.ue()  // id
	r.ue()  // log2_max_frame_num_minus4
	require.Equal(t, uint32(2), r.ue(), "pic_order_cnt_type")
	r.ue()
	r.u(1)
	mbW, mbH := int(r.ue())+1, int(r.ue())+1
	require.Equal(t, uint32(1), r.u(1), "frame_mbs_only_flag")
	r.u(1)
	width, height = 16*mbW, 16*mbH
	if r.u(1) == 1 {
		l, rt, tp, b := r.ue(), r.ue(), r.ue(), r.ue()
		width -= 2 * int(l+rt)
		height -= 2 * int(tp+b)
	}
	return profile, width, height
}
