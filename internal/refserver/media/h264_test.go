package media

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bitString renders written bits as "0101...", trailing partial byte
// included.
func bitString(w *bitWriter) string {
	var sb strings.Builder
	for _, b := range w.buf {
		fmt.Fprintf(&sb, "%08b", b)
	}
	if w.nacc > 0 {
		fmt.Fprintf(&sb, "%0*b", w.nacc, w.acc&(1<<w.nacc-1))
	}
	return sb.String()
}

func TestExpGolomb(t *testing.T) {
	for _, tc := range []struct {
		v    uint32
		want string
	}{{0, "1"}, {1, "010"}, {2, "011"}, {3, "00100"}, {7, "0001000"}, {254, "000000011111111"}} {
		var w bitWriter
		w.ue(tc.v)
		assert.Equal(t, tc.want, bitString(&w), "ue(%d)", tc.v)
	}
	for _, tc := range []struct {
		v    int32
		want string
	}{{0, "1"}, {1, "010"}, {-1, "011"}, {2, "00100"}, {-6, "0001101"}} {
		var w bitWriter
		w.se(tc.v)
		assert.Equal(t, tc.want, bitString(&w), "se(%d)", tc.v)
	}
	// Long codes go through the split path and read back.
	var w bitWriter
	w.ue(1<<20 + 5)
	w.trailing()
	r := &bitReader{b: w.bytes()}
	assert.Equal(t, uint32(1<<20+5), r.ue())
}

func TestEmulationPrevention(t *testing.T) {
	nal := appendNAL(nil, 3, 5, []byte{0, 0, 1, 0, 0, 0, 0, 0, 3, 0, 0, 4})
	assert.Equal(t, []byte{0, 0, 0, 16, 0x65, 0, 0, 3, 1, 0, 0, 3, 0, 0, 3, 0, 3, 0, 0, 4}, nal)
	assert.Equal(t, []byte{0, 0, 1, 0, 0, 0, 0, 0, 3, 0, 0, 4}, unescape(nal[5:]))
}

func TestResidualLevels(t *testing.T) {
	// Levels as the decoder reads them back (suffixLength 0, +2 because
	// fewer than three trailing ones precede).
	read := func(r *bitReader) int {
		prefix := 0
		for r.u(1) == 0 {
			prefix++
		}
		code := min(prefix, 15)
		switch {
		case prefix == 14:
			code += int(r.u(4))
		case prefix == 15:
			code += int(r.u(12)) + 15
		}
		code += 2
		if code%2 == 0 {
			return (code + 2) / 2
		}
		return (-code - 1) / 2
	}
	for v := -255; v <= 255; v++ {
		if v >= -1 && v <= 1 {
			continue
		}
		var w bitWriter
		w.level(v)
		w.trailing()
		require.Equal(t, v, read(&bitReader{b: w.bytes()}), "level %d", v)
	}
}

func TestParameterSets(t *testing.T) {
	e := newH264Encoder(1920, 1080, VideoFPS)
	assert.Equal(t, [2]int{120, 68}, [2]int{e.mbW, e.mbH})
	assert.Equal(t, uint32(40), e.level())
	_, w, h := spsSize(t, appendNAL(nil, 3, 7, e.sps())[4:])
	assert.Equal(t, [2]int{1920, 1080}, [2]int{w, h}, "8 rows cropped")

	r := &bitReader{b: e.pps()}
	assert.Equal(t, uint32(0), r.ue())
	assert.Equal(t, uint32(0), r.ue())
	assert.Equal(t, uint32(0), r.u(1), "CAVLC")
	r.u(1)
	r.ue()
	r.ue()
	r.ue()
	r.u(3)
	assert.Equal(t, int32(h264QP-26), r.se())
	r.se()
	assert.Equal(t, int32(h264ChromaOffset), r.se())
	assert.Equal(t, uint32(1), r.u(1), "deblocking control present, so slices can turn it off")
}

func TestUnchangedPictureIsAllSkipped(t *testing.T) {
	e := newH264Encoder(64, 32, VideoFPS)
	pic := make([]ycc, e.mbW*e.mbH)
	for i := range pic {
		pic[i] = ycc{uint8(16 + i*20), 100, 150}
	}
	idr := e.picture(nil, pic, true)
	p := e.picture(nil, pic, false)
	assert.Greater(t, len(idr), len(p))
	// Slice header, then mb_skip_run of all eight macroblocks.
	r := &bitReader{b: unescape(p[5:])}
	assert.Equal(t, uint32(0), r.ue(), "first_mb_in_slice")
	assert.Equal(t, uint32(5), r.ue(), "P")
	r.ue()
	assert.Equal(t, uint32(1), r.u(h264Log2MaxFrameNum), "frame_num")
	r.u(3) // override, list modification, adaptive marking
	assert.Equal(t, int32(0), r.se())
	assert.Equal(t, uint32(1), r.ue(), "deblocking off")
	assert.Equal(t, uint32(8), r.ue(), "every macroblock skipped")
}
