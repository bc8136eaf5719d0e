package upload

import (
	"context"
	"io"
	"net/http"
	"testing"
)

// benchSize is the payload of the throughput benchmarks.
const benchSize = 16 << 20

// BenchmarkUploadReader measures Reader: reservation plus streamed PUT.
func BenchmarkUploadReader(b *testing.B) {
	c := childClient(b)
	ctx := context.Background()
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		src := io.NewSectionReader(pattern{size: benchSize}, 0, benchSize)
		if _, err := Reader(ctx, c, src, benchSize, "text/plain"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRawPut is the baseline of BenchmarkUploadReader: the same
// reservation and the same bytes PUT with a bare http.Client.
func BenchmarkRawPut(b *testing.B) {
	c := childClient(b)
	ctx := context.Background()
	hc := &http.Client{}
	b.SetBytes(benchSize)
	b.ReportAllocs()
	for b.Loop() {
		u, err := c.CreateUploadURL(ctx, benchSize, "text/plain")
		if err != nil {
			b.Fatal(err)
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPut, u.UploadURL, io.NewSectionReader(pattern{size: benchSize}, 0, benchSize))
		if err != nil {
			b.Fatal(err)
		}
		req.ContentLength = benchSize
		req.Header.Set("Content-Type", u.Headers.ContentType)
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("raw PUT: %s", resp.Status)
		}
	}
}
