package media

// A minimal H.264 encoder for pictures made of flat-coloured 16x16
// macroblocks: Constrained Baseline, CAVLC, one slice per picture, no
// deblocking. An IDR picture codes every macroblock as I_16x16; a P picture
// skips the macroblocks that did not change and codes the others as intra
// macroblocks again. Every macroblock is predicted from a flat neighbour
// (vertical from above, else horizontal from the left, else DC 128), so
// its residual is one flat value: a single DC level per plane. The
// quantisers below make that level reconstruct exactly, so the decoded
// picture equals the intended one and no reconstruction is simulated.

// ycc is a macroblock's colour: luma and the two chroma samples.
type ycc struct{ y, cb, cr uint8 }

const (
	// h264QP is the luma QP: at 28 the DC chain (LevelScale 256, shifts
	// by 2 and 6) gives back exactly the coded level as the residual.
	h264QP = 28
	// h264ChromaOffset brings the chroma QP to 22, where the chroma DC
	// chain (256 << 3 >> 5, then >> 6) is exact too.
	h264ChromaOffset = -6
	// h264Log2MaxFrameNum bounds frame_num; IDRs come more often.
	h264Log2MaxFrameNum = 8
)

// h264Encoder turns a sequence of macroblock pictures into NAL units.
type h264Encoder struct {
	width, height int // displayed size; the coded size is a multiple of 16
	mbW, mbH      int
	fps           int
	prev          []ycc // the previous picture, which P pictures refer to
	frameNum      uint32
	idrID         uint32
	w             bitWriter
}

// newH264Encoder prepares an encoder for even width and height.
func newH264Encoder(width, height, fps int) *h264Encoder {
	mbW, mbH := (width+15)/16, (height+15)/16
	return &h264Encoder{width: width, height: height, mbW: mbW, mbH: mbH, fps: fps, prev: make([]ycc, mbW*mbH)}
}

// level is level_idc: 4.0 covers 1080p at 30 fps, 5.1 anything up to
// 4096x2304.
func (e *h264Encoder) level() uint32 {
	if e.mbW*e.mbH <= 8192 && e.mbW*e.mbH*e.fps <= 245760 && max(e.mbW, e.mbH) <= 256 {
		return 40
	}
	return 51
}

// sps returns the sequence parameter set RBSP.
func (e *h264Encoder) sps() []byte {
	w := &e.w
	w.reset()
	w.u(8, 66)         // profile_idc: Baseline
	w.u(8, 0b11000000) // constraint_set0 and 1: Constrained Baseline
	w.u(8, e.level())
	w.ue(0) // seq_parameter_set_id
	w.ue(h264Log2MaxFrameNum - 4)
	w.ue(2) // pic_order_cnt_type 2: output order is decode order
	w.ue(1) // max_num_ref_frames
	w.flag(false)
	w.ue(uint32(e.mbW - 1))
	w.ue(uint32(e.mbH - 1))
	w.flag(true) // frame_mbs_only_flag
	w.flag(true) // direct_8x8_inference_flag
	cropX, cropY := e.mbW*16-e.width, e.mbH*16-e.height
	w.flag(cropX > 0 || cropY > 0)
	if cropX > 0 || cropY > 0 {
		// Offsets count pairs of pixels in 4:2:0.
		w.ue(0)
		w.ue(uint32(cropX / 2))
		w.ue(0)
		w.ue(uint32(cropY / 2))
	}
	w.flag(true) // vui_parameters_present_flag
	e.vui()
	w.trailing()
	return append([]byte(nil), w.bytes()...)
}

// vui tells players the colours (BT.709, limited range), square pixels,
// the frame rate, and that no picture waits for reordering.
func (e *h264Encoder) vui() {
	w := &e.w
	w.flag(true) // aspect_ratio_info_present_flag
	w.u(8, 1)    // 1:1
	w.flag(false)
	w.flag(true) // video_signal_type_present_flag
	w.u(3, 5)    // video_format unspecified
	w.flag(false)
	w.flag(true) // colour_description_present_flag
	w.u(8, 1)    // primaries, transfer, matrix: BT.709
	w.u(8, 1)
	w.u(8, 1)
	w.flag(false) // chroma_loc_info_present_flag
	w.flag(true)  // timing_info_present_flag
	w.u(32, 1)    // num_units_in_tick
	w.u(32, uint32(2*e.fps))
	w.flag(true)  // fixed_frame_rate_flag
	w.flag(false) // nal_hrd_parameters_present_flag
	w.flag(false) // vcl_hrd_parameters_present_flag
	w.flag(false) // pic_struct_present_flag
	w.flag(true)  // bitstream_restriction_flag
	w.flag(true)  // motion_vectors_over_pic_boundaries_flag
	w.ue(0)       // max_bytes_per_pic_denom
	w.ue(0)       // max_bits_per_mb_denom
	w.ue(9)       // log2_max_mv_length_horizontal
	w.ue(9)       // log2_max_mv_length_vertical
	w.ue(0)       // max_num_reorder_frames
	w.ue(1)       // max_dec_frame_buffering
}

// pps returns the picture parameter set RBSP.
func (e *h264Encoder) pps() []byte {
	w := &e.w
	w.reset()
	w.ue(0)       // pic_parameter_set_id
	w.ue(0)       // seq_parameter_set_id
	w.flag(false) // entropy_coding_mode_flag: CAVLC
	w.flag(false) // bottom_field_pic_order_in_frame_present_flag
	w.ue(0)       // num_slice_groups_minus1
	w.ue(0)       // num_ref_idx_l0_default_active_minus1
	w.ue(0)       // num_ref_idx_l1_default_active_minus1
	w.flag(false) // weighted_pred_flag
	w.u(2, 0)     // weighted_bipred_idc
	w.se(h264QP - 26)
	w.se(0) // pic_init_qs_minus26
	w.se(h264ChromaOffset)
	w.flag(true)  // deblocking_filter_control_present_flag
	w.flag(false) // constrained_intra_pred_flag
	w.flag(false) // redundant_pic_cnt_present_flag
	w.trailing()
	return append([]byte(nil), w.bytes()...)
}

// picture appends one coded picture (a length-prefixed slice NAL unit) to
// dst. cur holds mbW*mbH colours in raster order. An IDR picture restarts
// the sequence, which is where players can start or seek.
func (e *h264Encoder) picture(dst []byte, cur []ycc, idr bool) []byte {
	w := &e.w
	w.reset()
	if idr {
		e.frameNum = 0
	}
	w.ue(0) // first_mb_in_slice
	if idr {
		w.ue(7) // slice_type I, as are all slices of the picture
	} else {
		w.ue(5) // P
	}
	w.ue(0) // pic_parameter_set_id
	w.u(h264Log2MaxFrameNum, e.frameNum)
	if idr {
		w.ue(e.idrID)
	} else {
		w.flag(false) // num_ref_idx_active_override_flag
		w.flag(false) // ref_pic_list_modification_flag_l0
	}
	// dec_ref_pic_marking: the sliding window is enough.
	w.flag(false) // no_output_of_prior_pics_flag or adaptive_ref_pic_marking_mode_flag
	if idr {
		w.flag(false) // long_term_reference_flag
	}
	w.se(0) // slice_qp_delta
	w.ue(1) // disable_deblocking_filter_idc: keep the blocks flat

	skip := uint32(0)
	for i, c := range cur {
		if !idr && c == e.prev[i] {
			skip++
			continue
		}
		if !idr {
			w.ue(skip)
			skip = 0
		}
		e.intraMB(cur, i, !idr)
	}
	if skip > 0 {
		w.ue(skip)
	}
	w.trailing()

	refIdc, typ := byte(2), byte(1)
	if idr {
		refIdc, typ = 3, 5
		e.idrID = (e.idrID + 1) % 2
	}
	e.frameNum = (e.frameNum + 1) % (1 << h264Log2MaxFrameNum)
	copy(e.prev, cur)
	return appendNAL(dst, refIdc, typ, w.bytes())
}

// intraMB writes macroblock i of cur as I_16x16, predicted from the
// macroblock above or to the left, which are already decoded and flat.
func (e *h264Encoder) intraMB(cur []ycc, i int, inP bool) {
	w := &e.w
	pred := ycc{128, 128, 128}
	lumaMode, chromaMode := uint32(2), uint32(0) // DC
	switch {
	case i >= e.mbW:
		pred, lumaMode, chromaMode = cur[i-e.mbW], 0, 2 // vertical
	case i%e.mbW > 0:
		pred, lumaMode, chromaMode = cur[i-1], 1, 1 // horizontal
	}
	c := cur[i]
	dy := int(c.y) - int(pred.y)
	dcb := int(c.cb) - int(pred.cb)
	dcr := int(c.cr) - int(pred.cr)
	cbpChroma := uint32(0)
	if dcb != 0 || dcr != 0 {
		cbpChroma = 1 // chroma DC only
	}
	mbType := 1 + lumaMode + 4*cbpChroma // I_16x16_<mode>_<cbp>_0
	if inP {
		mbType += 5 // intra types follow the five P types
	}
	w.ue(mbType)
	w.ue(chromaMode)
	w.se(0) // mb_qp_delta
	w.dcBlock(dy, false)
	if cbpChroma != 0 {
		w.dcBlock(dcb, true)
		w.dcBlock(dcr, true)
	}
}

// dcBlock writes a CAVLC residual block whose only coefficient is v at
// scan position 0: the Intra16x16 luma DC block (nC 0) or a chroma DC
// block (nC -1). Neighbouring blocks never have AC coefficients, so nC is
// always 0 for luma.
func (w *bitWriter) dcBlock(v int, chroma bool) {
	switch {
	case v == 0: // coeff_token TotalCoeff 0
		if chroma {
			w.u(2, 0b01)
		} else {
			w.u(1, 1)
		}
		return
	case v == 1 || v == -1: // TotalCoeff 1, TrailingOnes 1, then its sign
		if chroma {
			w.u(1, 1)
		} else {
			w.u(2, 0b01)
		}
		w.flag(v < 0)
	default: // TotalCoeff 1, TrailingOnes 0, then the level
		if chroma {
			w.u(6, 0b000111)
		} else {
			w.u(6, 0b000101)
		}
		w.level(v)
	}
	w.u(1, 1) // total_zeros 0; the only coefficient needs no run_before
}

// level writes a coefficient of magnitude 2 or more as the first level of
// a block with fewer than three trailing ones, so suffixLength is 0 and
// the decoder adds 2 to the level code.
func (w *bitWriter) level(v int) {
	code := 2*v - 2
	if v < 0 {
		code = -2*v - 1
	}
	code -= 2
	switch {
	case code < 14: // level_prefix alone
		w.u(uint(code)+1, 1)
	case code < 30: // level_prefix 14 and a 4-bit suffix
		w.u(15, 1)
		w.u(4, uint32(code-14))
	default: // level_prefix 15 and a 12-bit suffix
		w.u(16, 1)
		w.u(12, uint32(code-30))
	}
}
