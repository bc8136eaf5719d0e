package media

import "github.com/mediagen/mediagen-go/internal/mediatype"

// Detect identifies media from its leading bytes (never from a file name)
// and returns the canonical media type and its kind. Unrecognized bytes give
// TypeOctetStream and Unknown; so do formats the service does not accept,
// such as Matroska (non-WebM), HEIF/AVIF, AAC in ADTS, HTML or XML.
//
// The bytes are named by internal/mediatype's sniffer, the one package
// upload uses, then containers are looked into as far as needed: ISO BMFF
// files are audio/mp4 when the brand says M4A/M4B or the movie has sound
// but no video track; WebM is audio/webm only when its Tracks hold no video
// track.
func Detect(b []byte) (mediaType string, kind Kind) {
	mt := mediatype.Sniff(b)
	switch mt {
	case TypeWebM:
		mt = webmType(b)
	case TypeMP4:
		mt = movieType(b)
	}
	if _, k, ok := mediatype.Canonical(mt); ok {
		return mt, k
	}
	return TypeOctetStream, Unknown
}

// webmType tells WebM video from WebM audio by its track types.
func webmType(b []byte) string {
	w, err := parseWebM(b)
	if err != nil || w.docType != "webm" {
		return TypeOctetStream
	}
	if w.tracksSeen && w.audio && !w.video {
		return TypeWebMAudio
	}
	return TypeWebM
}

// movieType tells an ISO BMFF file of a generic brand for audio when its
// movie has a sound track and no video track.
func movieType(b []byte) string {
	m, err := parseMovie(b)
	if err != nil {
		return TypeMP4
	}
	sound := false
	for _, t := range m.tracks {
		switch t.handler {
		case "vide":
			return TypeMP4
		case "soun":
			sound = true
		}
	}
	if sound {
		return TypeM4A
	}
	return TypeMP4
}
