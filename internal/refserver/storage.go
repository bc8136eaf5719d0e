package refserver

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// Validity of signed URLs.
const (
	uploadURLValidity  = 15 * time.Minute
	previewURLValidity = 6 * time.Hour
)

// signature is the HMAC of what a storage URL grants: the method, the path,
// the expiry, and for uploads the exact Content-Type and Content-Length.
// Every row of a list carries signed URLs, so the keyed hash and its
// buffers are reused rather than built per URL.
func (s *Server) signature(method, path string, expires int64, extra ...string) string {
	m, _ := s.macs.Get().(*signer)
	if m == nil {
		m = &signer{mac: hmac.New(sha256.New, s.signKey)}
	}
	b := append(m.buf[:0], method...)
	b = append(b, '\n')
	b = append(b, path...)
	b = append(b, '\n')
	b = strconv.AppendInt(b, expires, 10)
	for _, e := range extra {
		b = append(b, '\n')
		b = append(b, e...)
	}
	m.buf = b
	m.mac.Write(b)
	sig := hex.EncodeToString(m.mac.Sum(m.sum[:0]))
	m.mac.Reset()
	s.macs.Put(m)
	return sig
}

// signer is a reusable HMAC-SHA256 keyed with the server's signing key.
type signer struct {
	mac hash.Hash
	buf []byte // what is signed
	sum [sha256.Size]byte
}

// signedURL returns an absolute storage URL for path, valid until expires.
// The query is url.Values' encoding of expires and signature, written out:
// digits and hex need no escaping.
func (s *Server) signedURL(base, method, path string, expires time.Time, extra ...string) string {
	exp := expires.Unix()
	return base + path + "?expires=" + strconv.FormatInt(exp, 10) + "&signature=" + s.signature(method, path, exp, extra...)
}

// assetURL signs a GET of one asset, /storage/{collection}/{id}/{name}: the
// layout serveStorage routes.
func (s *Server) assetURL(base, collection, id, name string, expires time.Time) string {
	return s.signedURL(base, http.MethodGet, "/storage/"+collection+"/"+id+"/"+name, expires)
}

// checkSignature verifies a storage request's signature and expiry. The
// query must be exactly what was signed, expires and signature once each
// and expires as written: an altered URL is refused even where the change
// would not alter what it grants (a padded expiry, a repeated or added
// parameter), as a storage service checks the query it signed.
func (s *Server) checkSignature(r *http.Request, method string, extra ...string) *apiError {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil || len(q) != 2 || len(q["expires"]) != 1 || len(q["signature"]) != 1 {
		return forbiddenf("the URL is not signed: its query must be exactly the signed expires and signature")
	}
	exp, err := strconv.ParseInt(q.Get("expires"), 10, 64)
	if err != nil || strconv.FormatInt(exp, 10) != q.Get("expires") {
		return forbiddenf("the URL is not signed: expires is not as signed")
	}
	want := s.signature(method, r.URL.Path, exp, extra...)
	if !hmac.Equal([]byte(want), []byte(q.Get("signature"))) {
		return forbiddenf("the signature does not match")
	}
	if !s.clock.Now().Before(time.Unix(exp, 0)) {
		return forbiddenf("the signed URL expired")
	}
	return nil
}

// serveStorage is the storage host: signed uploads and signed asset
// downloads. It refuses any Authorization header, so an API key can never
// reach storage.
func (s *Server) serveStorage(w http.ResponseWriter, r *http.Request) {
	s.settle()
	if len(r.Header.Values("Authorization")) > 0 {
		writeError(w, forbiddenf("storage refuses requests that carry an Authorization header; the URL is the credential"))
		return
	}
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/storage/"), "/")
	if len(parts) == 2 && parts[0] == "uploads" {
		if r.Method != http.MethodPut {
			w.Header().Set("Allow", http.MethodPut)
			writeError(w, newError(http.StatusMethodNotAllowed, api.ErrorCodeMethodNotAllowed, "upload URLs take PUT"))
			return
		}
		s.putUpload(w, r, parts[1])
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, newError(http.StatusMethodNotAllowed, api.ErrorCodeMethodNotAllowed, "storage assets take GET"))
		return
	}
	if err := s.checkSignature(r, http.MethodGet); err != nil {
		writeError(w, err)
		return
	}
	var (
		body []byte
		mime string
		aerr *apiError
	)
	switch {
	case len(parts) == 3 && parts[0] == "generations":
		body, mime, aerr = s.generationAsset(parts[1], parts[2])
	case len(parts) == 3 && parts[0] == "voices" && parts[2] == voicePreviewName:
		body, mime, aerr = s.voicePreview(parts[1])
	case len(parts) == 3 && parts[0] == "templates":
		body, mime, aerr = templateAsset(parts[1], parts[2])
	default:
		aerr = notFoundf("no such object")
	}
	if aerr != nil {
		writeError(w, aerr)
		return
	}
	w.Header().Set("Content-Type", mime)
	w.Header().Set("Cache-Control", "private, max-age=3600")
	http.ServeContent(&contentWriter{ResponseWriter: w}, r, "", time.Time{}, bytes.NewReader(body))
}

// contentWriter gives the refusals of http.ServeContent (416 for a Range
// that selects nothing, 412 for a failed precondition), which it writes in
// plain text, the JSON error body every other answer has.
type contentWriter struct {
	http.ResponseWriter
	refused bool
}

func (w *contentWriter) WriteHeader(code int) {
	if code < 400 || w.refused {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.refused = true
	w.Header().Del("Cache-Control")
	w.Header().Del("X-Content-Type-Options")
	msg := "a precondition of the request failed"
	if code == http.StatusRequestedRangeNotSatisfiable {
		msg = "the Range header selects no bytes of the object"
	}
	writeError(w.ResponseWriter, newError(code, api.ErrorCodeInvalidArgument, "%s", msg))
}

// Write drops ServeContent's own text after a refusal.
func (w *contentWriter) Write(b []byte) (int, error) {
	if w.refused {
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// generationAsset makes one asset of a finished, visible generation.
func (s *Server) generationAsset(id, name string) ([]byte, string, *apiError) {
	s.mu.Lock()
	g, ok := s.gens[id]
	var spec outputSpec
	live := ok && !g.deleted && g.status == mediagen.GenerationStatusDone && s.clock.Now().Before(g.expiresAt)
	if live {
		spec = g.out
	}
	s.mu.Unlock()
	if !live {
		return nil, "", notFoundf("the asset was removed")
	}
	b, mime, err := assetBytes(id, spec, name)
	if err != nil {
		return nil, "", notFoundf("no such object")
	}
	return b, mime, nil
}

// putUpload is step 2 of the signed upload: the bytes land only with a
// valid, unexpired signature and exactly the signed Content-Type and
// Content-Length.
func (s *Server) putUpload(w http.ResponseWriter, r *http.Request, id string) {
	s.mu.Lock()
	f, ok := s.files[id]
	var declared string
	var size int64
	if ok {
		declared, size = f.declared, f.size
	}
	s.mu.Unlock()
	if !ok || declared == "" {
		// A reservation is dropped once its URL expires: the URL says so.
		msg := "the signature does not match"
		if exp, err := strconv.ParseInt(r.URL.Query().Get("expires"), 10, 64); err == nil && !s.clock.Now().Before(time.Unix(exp, 0)) {
			msg = "the signed URL expired"
		}
		writeError(w, forbiddenf("%s", msg))
		return
	}
	length := strconv.FormatInt(size, 10)
	if err := s.checkSignature(r, http.MethodPut, declared, length); err != nil {
		writeError(w, err)
		return
	}
	if got := r.Header.Values("Content-Type"); len(got) != 1 || got[0] != declared {
		writeError(w, forbiddenf("Content-Type must be exactly %q, as signed", declared))
		return
	}
	if got := r.Header.Values("Content-Length"); len(got) != 1 || got[0] != length || r.ContentLength != size {
		writeError(w, forbiddenf("Content-Length must be exactly %s, as signed", length))
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, size+1))
	if err != nil || int64(len(data)) != size {
		writeError(w, invalidf("the body is not the %s bytes signed", length))
		return
	}
	meta := inspect(data)

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	f, ok = s.files[id]
	if !ok {
		writeError(w, forbiddenf("the signed URL expired"))
		return
	}
	f.mediaType, f.kind, f.decodes, f.audio, f.rate, f.invalid = meta.mediaType, meta.kind, meta.decodes, meta.audio, meta.rate, meta.invalid
	if f.mediaType == media.TypeOctetStream || f.kind == media.Unknown {
		// Storage keeps what it was given; the declared type stands until
		// a generation checks the file.
		f.mediaType = declared
	}
	if f.landed.IsZero() {
		f.landed = now
	}
	w.WriteHeader(http.StatusOK)
}
