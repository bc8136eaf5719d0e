package refserver

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFakeClock(t *testing.T) {
	c := NewFakeClock(testStart)
	assert.Equal(t, testStart, c.Now())
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Advance(time.Second)
			_ = c.Now()
		}()
	}
	wg.Wait()
	assert.Equal(t, testStart.Add(10*time.Second), c.Now())
	c.Advance(-time.Second)
	assert.Equal(t, testStart.Add(9*time.Second), c.Now())
}

func TestRealClockIsTheDefault(t *testing.T) {
	s := New()
	defer s.Close()
	assert.WithinDuration(t, time.Now(), s.clock.Now(), time.Second)
}
