package media

import (
	"errors"
	"fmt"
)

// webmMasters are the EBML master elements validation descends into, so
// that their children's sizes are checked against them; any other element
// is checked as a whole against its parent.
var webmMasters = map[uint32]bool{
	ebmlHeaderID: true, mkvSegmentID: true, mkvInfoID: true, mkvTracksID: true, mkvTrackID: true,
	mkvClusterID: true, mkvGroupID: true,
	0x114D9B74: true, // SeekHead
	0x4DBB:     true, // Seek
	0x1C53BB6B: true, // Cues
	0xBB:       true, // CuePoint
	0xB7:       true, // CueTrackPositions
	0x1254C367: true, // Tags
	0x7373:     true, // Tag
	0x1043A770: true, // Chapters
	0x1941A469: true, // Attachments
	0xE0:       true, // Video
	0xE1:       true, // Audio
}

// segmentLevel are the children of a Segment: one of them ends a Cluster
// of unknown size.
var segmentLevel = map[uint32]bool{
	mkvClusterID: true, mkvInfoID: true, mkvTracksID: true,
	0x114D9B74: true, 0x1C53BB6B: true, 0x1254C367: true, 0x1043A770: true, 0x1941A469: true,
}

// maxEBMLDepth bounds the nesting validation follows.
const maxEBMLDepth = 16

// openMaster is a master element whose children are being read.
type openMaster struct {
	id      uint32
	end     int
	unknown bool // size unknown: it ends with its parent, or at a sibling
}

// validateWebM checks that every element lies inside its parent and the
// file, the file ending exactly where its last element does; that only a
// Segment or a Cluster leaves its size unknown (as live recorders write
// them); and that the duration is known.
func validateWebM(b []byte) error {
	open := []openMaster{{end: len(b)}}
	top := func() openMaster { return open[len(open)-1] }
	for pos := 0; pos < len(b); {
		for len(open) > 1 && pos >= top().end {
			if pos > top().end {
				return fmt.Errorf("an element crosses the end of its parent at byte %d", pos)
			}
			open = open[:len(open)-1]
		}
		limit := top().end
		id, size, hdr, ok := ebmlElement(b[pos:limit])
		if !ok {
			if limit == len(b) {
				return fmt.Errorf("element at byte %d: %w", pos, errTruncated)
			}
			return fmt.Errorf("a malformed element at byte %d", pos)
		}
		for len(open) > 1 && top().unknown && top().id == mkvClusterID && segmentLevel[id] {
			open = open[:len(open)-1]
		}
		start := pos + hdr
		unknown := size < 0
		if unknown {
			if id != mkvSegmentID && id != mkvClusterID {
				return fmt.Errorf("element 0x%X at byte %d has an unknown size", id, pos)
			}
			size = int64(limit - start)
		}
		if size > int64(limit-start) {
			if limit == len(b) {
				return fmt.Errorf("element 0x%X at byte %d: %w", id, pos, errTruncated)
			}
			return fmt.Errorf("element 0x%X at byte %d crosses the end of its parent", id, pos)
		}
		if webmMasters[id] {
			if len(open) > maxEBMLDepth {
				return errors.New("elements nested too deep")
			}
			open = append(open, openMaster{id: id, end: start + int(size), unknown: unknown})
			pos = start
			continue
		}
		pos = start + int(size)
	}
	w, err := parseWebM(b)
	if err != nil {
		return err
	}
	if w.docType != "webm" {
		return errors.New("the DocType is not webm")
	}
	if _, err := w.length(); err != nil {
		return err
	}
	return nil
}
