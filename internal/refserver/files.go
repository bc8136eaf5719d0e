package refserver

import (
	"context"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// file is an uploaded reference file. Only what validation needs is kept,
// never the bytes, so memory does not grow with uploads.
type file struct {
	timer // its expiry

	id        string
	projectID string
	name      string // multipart only
	size      int64
	declared  string // signed uploads: the signed Content-Type

	mediaType string
	kind      media.Kind
	decodes   bool          // images: the bytes decode as an image
	audio     time.Duration // audio: the length of the stream
	rate      int           // audio: its sample rate, in Hz
	invalid   string        // why the bytes are not a whole, valid file; "" when they are

	reservedUntil time.Time // signed uploads: the URL's expiry
	landed        time.Time // zero until the bytes landed
}

// isLive reports whether the file landed and has not expired at now.
func (f *file) isLive(now time.Time) bool {
	return !f.landed.IsZero() && now.Before(f.landed.Add(retention))
}

// expired reports whether the file is gone at now: a reservation whose
// upload URL expired before the bytes landed, or a file past its retention.
func (f *file) expired(now time.Time) bool {
	if f.landed.IsZero() {
		return !now.Before(f.reservedUntil)
	}
	return !f.isLive(now)
}

// due returns when f expires if nothing else happens to it.
func (f *file) due() time.Time {
	if f.landed.IsZero() {
		return f.reservedUntil
	}
	return f.landed.Add(retention)
}

// liveFile returns p's file id if its bytes landed and it has not expired.
// The caller holds s.mu.
func (s *Server) liveFile(p *project, id string, now time.Time) (*file, bool) {
	f, ok := s.files[id]
	if !ok || f.projectID != p.id || !f.isLive(now) {
		return nil, false
	}
	return f, true
}

// fileMeta is what inspect learns from bytes.
type fileMeta struct {
	mediaType string
	kind      media.Kind
	decodes   bool
	audio     time.Duration
	rate      int
	invalid   string
}

// inspect classifies bytes from their content, never from a name.
func inspect(b []byte) fileMeta {
	mt, kind := media.Detect(b)
	m := fileMeta{mediaType: mt, kind: kind}
	// Checked once, here, and kept: the bytes are not kept, and every
	// generation using the file reads the verdict.
	if err := media.Validate(b); err != nil {
		m.invalid = err.Error()
	}
	switch kind {
	case media.Image:
		_, _, err := media.ImageConfig(b)
		m.decodes = err == nil
	case media.Audio, media.Video:
		if a, err := media.ProbeAudio(b); err == nil {
			m.audio, m.rate = a.Duration, a.SampleRate
		}
	}
	return m
}

// UploadFiles answers POST /v3/files/upload: up to 10 files of at most
// 30 MiB under the field "files", each of an accepted type judged from its
// bytes. All land or none.
func (s *Server) UploadFiles(ctx context.Context, req api.UploadFilesRequestObject) (api.UploadFilesResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	if req.Body == nil {
		return invalidf("the body must be multipart/form-data with files under the field \"files\""), nil
	}
	var got []*file
	for {
		part, err := req.Body.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return uploadReadError(err), nil
		}
		if part.FormName() != "files" {
			// Read to its end all the same: a body cut inside a part that
			// is not a file is as malformed as one cut inside a file.
			_, err := io.Copy(io.Discard, part)
			part.Close()
			if err != nil {
				return uploadReadError(err), nil
			}
			continue
		}
		if len(got) == maxFilesPerBatch {
			return invalidf("at most %d files per upload", maxFilesPerBatch), nil
		}
		f, aerr := readUploadPart(part)
		if aerr != nil {
			return aerr, nil
		}
		f.projectID = p.id
		got = append(got, f)
	}
	if len(got) == 0 {
		return invalidf("no file under the field \"files\""), nil
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	out := api.FileList{Files: make([]mediagen.File, len(got))}
	for i, f := range got {
		f.id = "file_" + randomHex(12)
		f.landed = now
		s.files[f.id] = f
		s.timers.schedule(f, f.due())
		out.Files[i] = mediagen.File{ID: f.id, OriginalName: f.name, Size: f.size}
	}
	return api.UploadFiles200JSONResponse(out), nil
}

// checkUploadType refuses a multipart upload that is not
// multipart/form-data, the one type the interface document gives it:
// net/http's reader also takes multipart/mixed, whose parts have no form
// names a client can rely on.
func checkUploadType(r *http.Request) *apiError {
	if r.Method != http.MethodPost || r.URL.Path != "/v3/files/upload" {
		return nil
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "multipart/form-data" {
		return invalidf("the body must be multipart/form-data with files under the field \"files\"")
	}
	return nil
}

// readUploadPart reads and classifies one file of a multipart upload, and
// closes the part.
func readUploadPart(part *multipart.Part) (*file, *apiError) {
	name := part.FileName()
	data, err := io.ReadAll(io.LimitReader(part, maxFileSize+1))
	part.Close()
	if err != nil {
		return nil, uploadReadError(err)
	}
	if len(data) > maxFileSize {
		return nil, invalidf("file %q is over 30 MB (%d bytes)", name, maxFileSize)
	}
	meta := inspect(data)
	if meta.kind == media.Unknown {
		return nil, invalidf("file %q is not of an accepted type (images, audio, video, PDF, ZIP, text, JSON)", name)
	}
	// The bytes decide the type. A declared type the service knows must
	// agree with them; one it does not know (a client's guess from the
	// name) is ignored.
	if declared := part.Header.Get("Content-Type"); declaredKnown(declared) && !media.Compatible(declared, meta.mediaType) {
		return nil, invalidf("file %q is declared %s but its bytes are %s", name, declared, meta.mediaType)
	}
	return &file{
		name: name, size: int64(len(data)),
		mediaType: meta.mediaType, kind: meta.kind, decodes: meta.decodes, audio: meta.audio, rate: meta.rate, invalid: meta.invalid,
	}, nil
}

// ceilSecond rounds t up to a whole second. Signed URLs carry their expiry
// in unix seconds, so rounding up keeps a URL valid for at least the
// validity announced in expiresIn.
func ceilSecond(t time.Time) time.Time {
	if r := t.Truncate(time.Second); !r.Equal(t) {
		return r.Add(time.Second)
	}
	return t
}

// declaredKnown reports whether a part's declared type is one the service
// accepts, and so must match the bytes.
func declaredKnown(declared string) bool {
	_, ok := media.Accepted(declared)
	return ok
}

// uploadReadError answers a multipart body that could not be read: over
// the size cap or malformed, both 400 as the interface document says.
func uploadReadError(err error) *apiError {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return invalidf("the upload is over %d files of 30 MB", maxFilesPerBatch)
	}
	return invalidf("malformed multipart body: %s", err.Error())
}

// CreateUploadURL answers POST /v3/files/upload-url: reserves a file id and
// signs a PUT of exactly bytes bytes of contentType, valid 15 minutes.
func (s *Server) CreateUploadURL(ctx context.Context, req api.CreateUploadURLRequestObject) (api.CreateUploadURLResponseObject, error) {
	p, aerr := caller(ctx)
	if aerr != nil {
		return aerr, nil
	}
	if req.Body == nil {
		return invalidf("the body must be a JSON object with bytes and contentType"), nil
	}
	b, ct := req.Body.Bytes, req.Body.ContentType
	if b <= 0 {
		return invalidf("bytes must be the exact size of the file, a positive integer"), nil
	}
	if ct == "" {
		return invalidf("contentType is required: the media type of the file"), nil
	}
	if mt, _, err := mime.ParseMediaType(ct); err != nil || !strings.Contains(mt, "/") {
		return invalidf("contentType %q is not a media type", ct), nil
	}
	if b > maxFileSize {
		return newError(http.StatusRequestEntityTooLarge, api.ErrorCodePayloadTooLarge, "bytes is over 30 MB (%d bytes)", maxFileSize), nil
	}
	kind, ok := media.Accepted(ct)
	if !ok {
		return newError(http.StatusUnsupportedMediaType, api.ErrorCodeUnsupportedMediaType,
			"contentType %q is not accepted (images, audio, video, PDF, ZIP, text, JSON)", ct), nil
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	f := &file{
		id: "file_" + randomHex(12), projectID: p.id, size: b, declared: ct,
		mediaType: ct, kind: kind, reservedUntil: ceilSecond(now.Add(uploadURLValidity)),
	}
	s.files[f.id] = f
	s.timers.schedule(f, f.due())
	length := strconv.FormatInt(b, 10)
	return api.CreateUploadURL200JSONResponse{
		File:      mediagen.File{ID: f.id},
		UploadURL: s.signedURL(baseFrom(ctx), http.MethodPut, "/storage/uploads/"+f.id, f.reservedUntil, ct, length),
		Method:    mediagen.UploadURLMethodPUT,
		Headers:   mediagen.UploadHeaders{ContentType: ct, ContentLength: b},
		ExpiresIn: int(uploadURLValidity / time.Second),
	}, nil
}
