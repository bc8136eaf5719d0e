package needs

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
)

// fakeTB records how a test ended.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Skip(args ...any)               { f.skipped = args[0].(string); panic(f) }
func (f *fakeTB) Fatalf(format string, a ...any) { f.failed = format; panic(f) }

func run(err error) (tb *fakeTB) {
	tb = &fakeTB{}
	defer func() { _ = recover() }()
	Component(tb, "ffmpeg", "ffmpeg", err)
	return tb
}

func TestComponent(t *testing.T) {
	t.Setenv("CI", "")
	tb := run(nil)
	assert.Empty(t, tb.skipped)
	assert.Empty(t, tb.failed)

	tb = run(errors.New("ffprobe: not in PATH"))
	assert.Equal(t, "ffmpeg not found: install Debian's ffmpeg package (apt-get install ffmpeg) to run this test", tb.skipped)
	assert.Empty(t, tb.failed)

	t.Setenv("CI", "1")
	tb = run(errors.New("ffprobe: not in PATH"))
	assert.Empty(t, tb.skipped, "CI never skips")
	assert.NotEmpty(t, tb.failed)
}
