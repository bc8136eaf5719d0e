// Package testlog gives the module's tests a log sink they can share with
// the code under test: a buffer safe for concurrent writers and readers,
// and debug-level loggers that write into one.
package testlog

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer is a bytes.Buffer that a logger, a command's goroutines and a test
// may write to and read from at once. The zero value is ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p to the buffer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// DebugLogger returns a logger that writes every record, Debug included, as
// a JSON line into the Buffer it also returns.
func DebugLogger() (*slog.Logger, *Buffer) {
	var b Buffer
	return slog.New(slog.NewJSONHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &b
}

// DebugTextLogger is [DebugLogger] in slog's text format (key=value pairs),
// for tests that look for attributes as a person reads them.
func DebugTextLogger() (*slog.Logger, *Buffer) {
	var b Buffer
	return slog.New(slog.NewTextHandler(&b, &slog.HandlerOptions{Level: slog.LevelDebug})), &b
}
