package upload

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/benchpair"
)

// pairSize is the payload of the upload pair: 30 MB, just under the
// service's limit.
const pairSize = 30_000_000

// BenchmarkPairUpload30MB compares Reader (reservation plus streamed PUT)
// with its floor: the same reservation and the same bytes PUT with a bare
// http.Client. The reference server runs in a child process (see
// childserver_test.go), so this process's heap holds only the client side.
// The sides alternate, one upload each per block (see internal/benchpair);
// "sdk-MB/s" and "raw-MB/s" are their throughputs, "throughput-ratio" the
// median over blocks of raw time over SDK time. After the timed pairs, one
// more upload of each side is sampled every MiB for its peak heap growth
// ("sdk-peak-heap-B", "raw-peak-heap-B"); the sampling is not timed.
//
//	go test -run '^$' -bench PairUpload30MB -benchtime 10x ./upload/
func BenchmarkPairUpload30MB(b *testing.B) {
	c := childClient(b)
	ctx := context.Background()
	hc := &http.Client{}
	sdk := func(tb testing.TB, h *heapSampler) {
		var r io.Reader = io.NewSectionReader(pattern{size: pairSize}, 0, pairSize)
		var opts []Option
		if h != nil {
			opts = append(opts, WithProgress(func(sent, _ int64) { h.sample(sent) }))
		}
		f, err := Reader(ctx, c, r, pairSize, "text/plain", opts...)
		require.NoError(tb, err)
		require.NotEmpty(tb, f.ID)
	}
	raw := func(tb testing.TB, h *heapSampler) {
		var r io.Reader = io.NewSectionReader(pattern{size: pairSize}, 0, pairSize)
		if h != nil {
			r = &sampledReader{r: r, h: h}
		}
		rawPut(tb, ctx, c, hc, r)
	}
	res := benchpair.RunBlocks(b, 1, 1, [2]benchpair.Side{
		{Name: "sdk", Run: func(b *testing.B) { sdk(b, nil) }},
		{Name: "raw", Run: func(b *testing.B) { raw(b, nil) }},
	})
	mbps := func(i int) float64 { return float64(res.Ops) * pairSize / 1e6 / res.Time[i].Seconds() }
	b.ReportMetric(mbps(0), "sdk-MB/s")
	b.ReportMetric(mbps(1), "raw-MB/s")
	b.ReportMetric(1/res.TimeRatio, "throughput-ratio")
	sdkHeap := measure(b, func(h *heapSampler) { sdk(b, h) })
	rawHeap := measure(b, func(h *heapSampler) { raw(b, h) })
	b.ReportMetric(float64(sdkHeap.peakHeapGrowth), "sdk-peak-heap-B")
	b.ReportMetric(float64(rawHeap.peakHeapGrowth), "raw-peak-heap-B")
}

// rawPut reserves an upload URL and PUTs pairSize bytes of body to it with
// hc, as a caller without package upload would.
func rawPut(tb testing.TB, ctx context.Context, c *client.Client, hc *http.Client, body io.Reader) {
	u, err := c.CreateUploadURL(ctx, pairSize, "text/plain")
	require.NoError(tb, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.UploadURL, body)
	require.NoError(tb, err)
	req.ContentLength = pairSize
	req.Header.Set("Content-Type", u.Headers.ContentType)
	resp, err := hc.Do(req)
	require.NoError(tb, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	require.Equal(tb, http.StatusOK, resp.StatusCode, "raw PUT")
}
