package upload

import (
	"context"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
)

// pattern is an io.ReaderAt over size bytes of printable text generated on
// the fly: it holds no buffer, so uploading it costs only what the upload
// path itself allocates.
type pattern struct{ size int64 }

const patternLine = "mediagen upload streaming test line: 0123456789 abcdefghijklmnopqrstuvwxyz\n"

func (p pattern) ReadAt(b []byte, off int64) (int, error) {
	if off >= p.size {
		return 0, io.EOF
	}
	n := 0
	for n < len(b) && off+int64(n) < p.size {
		i := (off + int64(n)) % int64(len(patternLine))
		n += copy(b[n:min(len(b), n+int(p.size-off-int64(n)))], patternLine[i:])
	}
	if off+int64(n) >= p.size {
		return n, io.EOF
	}
	return n, nil
}

func TestPatternIsDeterministicText(t *testing.T) {
	p := pattern{size: 200}
	b, err := io.ReadAll(io.NewSectionReader(p, 0, p.size))
	require.NoError(t, err)
	assert.Equal(t, (patternLine + patternLine + patternLine)[:200], string(b))
	mid := make([]byte, 10)
	n, err := p.ReadAt(mid, 195)
	assert.Equal(t, 5, n)
	assert.ErrorIs(t, err, io.EOF)
	assert.Equal(t, string(b[195:]), string(mid[:n]))
}

// memoryUse is the heap cost of one upload, measured around it.
type memoryUse struct {
	peakHeapGrowth uint64 // highest HeapAlloc seen during the upload, minus HeapAlloc before
	heapGrowth     uint64 // HeapAlloc after (after a GC), minus before
	allocated      uint64 // TotalAlloc growth: every byte allocated meanwhile
}

// heapSampler records the highest HeapAlloc seen, sampling every MiB of
// progress.
type heapSampler struct {
	peak, next int64
}

func (h *heapSampler) sample(sent int64) {
	if sent < h.next {
		return
	}
	h.next = sent + 1<<20
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	h.peak = max(h.peak, int64(m.HeapAlloc))
}

// sampledReader reports its read offset to a heapSampler.
type sampledReader struct {
	r    io.Reader
	sent int64
	h    *heapSampler
}

func (s *sampledReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.sent += int64(n)
	s.h.sample(s.sent)
	return n, err
}

// measureUpload uploads size bytes of pattern with Reader and samples the
// heap every MiB sent.
func measureUpload(tb testing.TB, c *client.Client, size int64) memoryUse {
	tb.Helper()
	return measure(tb, func(h *heapSampler) {
		src := io.NewSectionReader(pattern{size: size}, 0, size)
		f, err := Reader(context.Background(), c, src, size, "text/plain", WithProgress(func(sent, _ int64) { h.sample(sent) }))
		require.NoError(tb, err)
		require.NotEmpty(tb, f.ID)
	})
}

// measureMultipart uploads size bytes of pattern as one Multipart part and
// samples the heap every MiB read from it.
func measureMultipart(tb testing.TB, c *client.Client, size int64) memoryUse {
	tb.Helper()
	return measure(tb, func(h *heapSampler) {
		src := &sampledReader{r: io.NewSectionReader(pattern{size: size}, 0, size), h: h}
		files, err := Multipart(context.Background(), c, []Part{{Name: "shots.txt", Reader: src, Size: size}})
		require.NoError(tb, err)
		require.Len(tb, files, 1)
		require.EqualValues(tb, size, files[0].Size)
	})
}

// measure runs upload between two heap readings.
func measure(tb testing.TB, upload func(*heapSampler)) memoryUse {
	tb.Helper()
	var before, now runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	h := &heapSampler{peak: int64(before.HeapAlloc)}
	upload(h)
	runtime.ReadMemStats(&now)
	peak := uint64(max(h.peak, int64(now.HeapAlloc)))
	allocated := now.TotalAlloc - before.TotalAlloc
	runtime.GC()
	runtime.ReadMemStats(&now)
	return memoryUse{
		peakHeapGrowth: peak - min(peak, before.HeapAlloc),
		heapGrowth:     now.HeapAlloc - min(now.HeapAlloc, before.HeapAlloc),
		allocated:      allocated,
	}
}

func TestUpload30MBStreamsInBoundedMemory(t *testing.T) {
	c := childClient(t)
	measureUpload(t, c, 1<<20) // warm up connections and pools
	m := measureUpload(t, c, MaxFileSize)
	t.Logf("30 MB upload: peak heap growth %d B, retained %d B, allocated %d B", m.peakHeapGrowth, m.heapGrowth, m.allocated)
	assert.Less(t, m.peakHeapGrowth, uint64(1<<20), "peak heap growth under 1 MiB")
	assert.Less(t, m.allocated, uint64(1<<20), "under 1 MiB allocated in all for 30 MB sent")
}

func TestMultipart30MBStreamsInBoundedMemory(t *testing.T) {
	c := childClient(t)
	measureMultipart(t, c, 1<<20)
	m := measureMultipart(t, c, MaxFileSize)
	t.Logf("30 MB multipart part: peak heap growth %d B, retained %d B, allocated %d B", m.peakHeapGrowth, m.heapGrowth, m.allocated)
	assert.Less(t, m.peakHeapGrowth, uint64(1<<20), "peak heap growth under 1 MiB")
	assert.Less(t, m.allocated, uint64(1<<20), "under 1 MiB allocated in all for 30 MB sent")
}

func BenchmarkUploadMemory30MB(b *testing.B) {
	c := childClient(b)
	measureUpload(b, c, 1<<20)
	var m memoryUse
	for b.Loop() {
		m = measureUpload(b, c, MaxFileSize)
	}
	b.ReportMetric(float64(m.peakHeapGrowth), "peak-heap-B")
	b.ReportMetric(float64(m.allocated), "alloc-B/upload")
}
