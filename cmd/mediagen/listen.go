package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/webhook"
)

// retryDelay is how long the service waits before its one retry of a
// delivery that was not acknowledged.
const retryDelay = 2 * time.Second

// listenCommand is `mediagen listen --forward-to URL`.
func (a *app) listenCommand() *cobra.Command {
	var (
		url, secret, only string
		interval          time.Duration
	)
	cmd := &cobra.Command{
		Use:   "listen --forward-to URL [--events E,...] [--interval D] [--webhook-secret S]",
		Short: "Forward the project's webhook events to a receiver on this machine",
		Long: `Follows the project's generations and voice clones from the moment it
starts and, when one ends, sends your receiver the delivery the service would
send: a POST of {"event": "generation.done", "generation": {...}} (or
generation.error, generation.timeout, voice.done, voice.error with "voice"),
signed with the project's webhook secret (--webhook-secret, or
$MEDIAGEN_WEBHOOK_SECRET) in X-Service-Timestamp and X-Service-Signature. An
answer other than 2xx, or none within 5 seconds, is retried once after 2
seconds, as the service does. So a receiver on localhost gets real events
with no public URL, no tunnel and no change of code.

It reads the list of generations every --interval (newest first, only as far
as what it has already seen, and further only for renders it follows) and the
project's voice clones; it never asks for generations one by one. Each
attempt prints a row: the event, the id, the receiver's status code, the
latency and the attempt; --json prints one object per line. --events keeps
some events only, such as --events generation.done,voice.error.

It runs until interrupted (Ctrl-C), then exits 0. It exits 3 when the key is
refused and 6 when the service cannot be reached at the start.

  mediagen listen --forward-to http://localhost:8000/hooks`,
		Args: cobra.NoArgs,
		RunE: a.runE(func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if url == "" {
				return usageErrorf("--forward-to URL is required")
			}
			if _, err := signedRequest(ctx, url, "s", nil); err != nil {
				return usageErrorf("--forward-to %q: %v", url, err)
			}
			if secret == "" {
				secret = os.Getenv(envWebhookSecret)
			}
			if secret == "" {
				return usageErrorf("no signing secret: pass --webhook-secret or set %s", envWebhookSecret)
			}
			wanted, err := parseEvents(only)
			if err != nil {
				return err
			}
			if interval < 100*time.Millisecond {
				return usageErrorf("--interval %v: want at least 100ms", interval)
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			fw := &forwarder{a: a, url: url, secret: secret, wanted: wanted, hc: &http.Client{
				Timeout:       ackWindow,
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			}}
			return a.listen(ctx, newFollower(c), fw, interval)
		}),
	}
	cmd.Flags().StringVar(&url, "forward-to", "", "the receiver's URL, such as http://localhost:8000/hooks")
	cmd.Flags().StringVar(&secret, "webhook-secret", "", "the project's signing secret (default: $"+envWebhookSecret+")")
	cmd.Flags().StringVar(&only, "events", "", "forward only these events, comma-separated (default: all)")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often to list generations and voice clones")
	return cmd
}

// parseEvents reads --events: nil, meaning all, when it is empty.
func parseEvents(s string) ([]webhook.EventName, error) {
	if s == "" {
		return nil, nil
	}
	var out []webhook.EventName
	for _, name := range strings.Split(s, ",") {
		e := webhook.EventName(strings.TrimSpace(name))
		if !slices.Contains(events, e) {
			return nil, usageErrorf("--events: unknown event %q; the events are %s", name, joinEvents())
		}
		out = append(out, e)
	}
	return out, nil
}

// listen lists every interval and forwards what ended, until ctx ends. A
// listing that fails at the start, or for a key refused, ends it; later
// failures are reported on stderr and the next listing tries again.
func (a *app) listen(ctx context.Context, f *follower, fw *forwarder, interval time.Duration) error {
	defer fw.wg.Wait()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	var last string
	for started := false; ; {
		err := a.listOnce(ctx, f, fw)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil && (!started || errors.Is(err, client.ErrUnauthorized)):
			return err
		case err != nil && err.Error() != last:
			fmt.Fprintf(a.stderr, "mediagen: %s; listing again every %v\n", oneLine(err.Error()), interval)
		case !started:
			started = true
			if !a.json {
				fw.print(attempt{}) // the header
			}
			a.note("forwarding the project's events to %s; Ctrl-C to stop", fw.url)
		}
		last = ""
		if err != nil {
			last = err.Error()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// listOnce lists generations, then voice clones, and forwards what ended.
func (a *app) listOnce(ctx context.Context, f *follower, fw *forwarder) error {
	gens, err := f.generations(ctx)
	for _, g := range gens {
		body, berr := generationBody(generationEvent(g), g)
		fw.forward(ctx, generationEvent(g), g.ID, body, berr)
	}
	if err != nil {
		return fmt.Errorf("listing generations: %w", err)
	}
	voices, err := f.clones(ctx)
	if err != nil {
		return fmt.Errorf("listing voice clones: %w", err)
	}
	for _, v := range voices {
		body, berr := voiceBody(voiceEvent(v), v)
		fw.forward(ctx, voiceEvent(v), v.ID, body, berr)
	}
	return nil
}

// forwarder sends deliveries to the receiver, each on its own goroutine
// (as the service does: a slow receiver holds up no listing), and prints
// every attempt.
type forwarder struct {
	a           *app
	url, secret string
	wanted      []webhook.EventName // nil: all
	hc          *http.Client
	wg          sync.WaitGroup
	mu          sync.Mutex // one row at a time
}

// attempt is what one attempt of a delivery printed.
type attempt struct {
	Time      time.Time         `json:"time"`
	Event     webhook.EventName `json:"event"`
	ID        string            `json:"id"`
	Status    int               `json:"status,omitempty"` // absent when no answer came
	Latency   time.Duration     `json:"-"`
	LatencyMs float64           `json:"latencyMs"`
	Attempt   int               `json:"attempt"`
	Delivered bool              `json:"delivered"` // a 2xx within the service's window
	Error     string            `json:"error,omitempty"`
}

// forward delivers body, the event's, unless --events leaves the event out.
func (fw *forwarder) forward(ctx context.Context, event webhook.EventName, id string, body []byte, err error) {
	if fw.wanted != nil && !slices.Contains(fw.wanted, event) {
		return
	}
	if err != nil { // encoding a model the client decoded: not expected
		fw.print(attempt{Time: time.Now(), Event: event, ID: id, Attempt: 1, Error: err.Error()})
		return
	}
	fw.wg.Add(1)
	go func() {
		defer fw.wg.Done()
		for n := 1; n <= 2; n++ {
			if n > 1 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(retryDelay):
				}
			}
			at := fw.send(ctx, body)
			if ctx.Err() != nil {
				return // interrupted: not the receiver's answer
			}
			at.Event, at.ID, at.Attempt = event, id, n
			fw.print(at)
			if at.Delivered {
				return
			}
		}
	}()
}

// send makes one attempt, signed as it is sent, as the service signs each.
func (fw *forwarder) send(ctx context.Context, body []byte) attempt {
	at := attempt{Time: time.Now()}
	req, err := signedRequest(ctx, fw.url, fw.secret, body)
	if err != nil {
		at.Error = err.Error()
		return at
	}
	req.Header.Set("User-Agent", "mediagen-cli/"+version()+" (listen)")
	resp, err := fw.hc.Do(req)
	at.Latency = time.Since(at.Time)
	at.LatencyMs = float64(at.Latency.Microseconds()) / 1000
	switch {
	case err != nil && isTimeout(err):
		at.Error = fmt.Sprintf("no answer within %v", ackWindow)
	case err != nil:
		at.Error = unwrapURLError(err).Error()
	default:
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		resp.Body.Close()
		at.Status, at.Delivered = resp.StatusCode, resp.StatusCode/100 == 2
	}
	return at
}

// print writes one attempt as a row, or a line of JSON.
func (fw *forwarder) print(at attempt) {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	if fw.a.json {
		_ = fw.a.writeJSON(at)
		return
	}
	if at.Attempt == 0 {
		fw.a.printf("%s\n", attemptRow("TIME", "EVENT", "ID", "STATUS", "LATENCY", "ATTEMPT", "ERROR"))
		return
	}
	status := ""
	if at.Status != 0 {
		status = fmt.Sprint(at.Status)
	}
	fw.a.printf("%s\n", attemptRow(at.Time.Local().Format("15:04:05"), string(at.Event), at.ID, status,
		at.Latency.Round(100*time.Microsecond).String(), fmt.Sprint(at.Attempt), at.Error))
}

// attemptRow lays out one row of listen's table. The table is written as
// deliveries happen, so its columns have fixed widths rather than the
// widths of their contents.
func attemptRow(cells ...string) string {
	for i, c := range cells {
		if c == "" {
			c = "-"
		}
		cells[i] = printable(c)
	}
	row := fmt.Sprintf("%-8s  %-18s  %-24s  %-6s  %-9s  %-7s  %s", cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], cells[6])
	return strings.TrimRight(row, " ")
}
