package main

import (
	"fmt"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
)

// uploadProgress returns the options of an upload of name that draw a byte
// bar on stderr when it is a terminal (none otherwise), and a function to
// call once the upload returned, which ends the bar's line.
func (a *app) uploadProgress(name string) ([]upload.Option, func()) {
	if !isTerminal(a.stderr) {
		return nil, func() {}
	}
	var (
		mu  sync.Mutex
		bar *progressbar.ProgressBar
	)
	show := func(sent, total int64) {
		mu.Lock()
		defer mu.Unlock()
		if bar == nil {
			bar = progressbar.NewOptions64(total,
				progressbar.OptionSetWriter(a.stderr),
				progressbar.OptionSetDescription(printable(name)),
				progressbar.OptionShowBytes(true),
				progressbar.OptionShowCount(),
				progressbar.OptionSetWidth(30),
				progressbar.OptionThrottle(65*time.Millisecond),
				progressbar.OptionSetPredictTime(false),
				progressbar.OptionSetRenderBlankState(true),
			)
		}
		_ = bar.Set64(sent)
	}
	done := func() {
		mu.Lock()
		defer mu.Unlock()
		if bar != nil {
			_ = bar.Exit()
			fmt.Fprintln(a.stderr)
		}
	}
	return []upload.Option{upload.WithProgress(show)}, done
}

// statusLine is a live line on stderr, a spinner with what a wait sees,
// drawn only when stderr is a terminal.
type statusLine struct {
	mu  sync.Mutex
	bar *progressbar.ProgressBar // nil when stderr is not a terminal
}

// newStatusLine starts a status line reading text.
func (a *app) newStatusLine(text string) *statusLine {
	if !isTerminal(a.stderr) {
		return &statusLine{}
	}
	return &statusLine{bar: progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(a.stderr),
		progressbar.OptionSetDescription(printable(text)),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionSetRenderBlankState(true),
	)}
}

// set changes the text of the line; it shows escaped, as a table cell.
func (s *statusLine) set(text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bar != nil {
		s.bar.Describe(printable(text))
	}
}

// stop removes the line, leaving the terminal as it was.
func (s *statusLine) stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bar != nil {
		_ = s.bar.Finish()
		s.bar = nil
	}
}

// generationText is what a status line shows of a generation.
func generationText(g *mediagen.Generation) string {
	return fmt.Sprintf("%s %s %s", g.ID, g.Feature, g.Status)
}

// watch returns the option that keeps line up to date with a wait on one
// generation.
func (s *statusLine) watch() poll.Option {
	return poll.OnUpdate(func(g *mediagen.Generation) { s.set(generationText(g)) })
}
