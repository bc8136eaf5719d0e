package testlog

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestBufferTakesConcurrentWrites(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	assert.Len(t, b.String(), 800)
}

func TestDebugLoggers(t *testing.T) {
	logger, buf := DebugLogger()
	logger.Debug("retrying", "attempt", 2)
	assert.Contains(t, buf.String(), `"level":"DEBUG"`)
	assert.Contains(t, buf.String(), `"attempt":2`)

	logger, buf = DebugTextLogger()
	logger.Debug("retrying", "path", "/v3/pricing")
	assert.Contains(t, buf.String(), "level=DEBUG")
	assert.Contains(t, buf.String(), "path=/v3/pricing")
}
