package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go/webhook"
)

// verifyCommand is `mediagen verify --secret S [FILE]`.
func (a *app) verifyCommand() *cobra.Command {
	var (
		secret    string
		tolerance time.Duration
		ignoreAge bool
	)
	cmd := &cobra.Command{
		Use:   "verify [FILE] [--secret S] [--ignore-age]",
		Short: "Check the signature of a saved webhook delivery",
		Long: `Checks a saved webhook delivery as a receiver must: the HMAC-SHA256 of
"<timestamp>.<raw body>" under the secret (--secret, or
$MEDIAGEN_WEBHOOK_SECRET) against each entry of X-Service-Signature, and the
age of X-Service-Timestamp (at most 5 minutes, or --tolerance). It reads FILE,
or stdin when FILE is absent or "-".

The saved form is the raw HTTP request: the request line, the headers, a
blank line and the body byte for byte, as 'mediagen trigger --save FILE'
writes it and as a Go receiver writes it with httputil.DumpRequest(r, true).
A delivery saved longer ago than the tolerance is refused as stale;
--ignore-age checks its signature alone.

Exit code 0 when it is valid, 1 when it is not, 2 when the file cannot be read.

  mediagen trigger generation.done --save delivery.http
  mediagen verify < delivery.http`,
		Args: cobra.MaximumNArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			if tolerance <= 0 { // the check would refuse it, as if the delivery were not valid
				return usageErrorf("--tolerance %v: want a positive duration", tolerance)
			}
			if secret == "" {
				secret = os.Getenv(envWebhookSecret)
			}
			if secret == "" {
				return usageErrorf("no signing secret: pass --secret or set %s", envWebhookSecret)
			}
			in, name := a.stdin, "stdin"
			if len(args) == 1 && args[0] != "-" {
				f, err := os.Open(args[0])
				if err != nil {
					return usageErrorf("%v", err)
				}
				defer f.Close()
				in, name = f, args[0]
			}
			req, body, err := readDelivery(in)
			if err != nil {
				return usageErrorf("%s is not a saved delivery (a raw HTTP request): %v", name, err)
			}
			opts := []webhook.Option{webhook.WithTolerance(tolerance)}
			signed, tsErr := strconv.ParseInt(req.Header.Get(webhook.HeaderTimestamp), 10, 64)
			if ignoreAge && tsErr == nil {
				opts = append(opts, webhook.WithNow(func() time.Time { return time.Unix(signed, 0) }))
			}
			ev, err := webhook.Parse(body, req.Header, secret, opts...)
			if err != nil {
				if errors.Is(err, webhook.ErrTimestampTooOld) {
					err = fmt.Errorf("%w (--ignore-age checks the signature alone)", err)
				}
				return &exitError{code: exitOther, err: fmt.Errorf("not valid: %w", err)}
			}
			id := ""
			switch {
			case ev.Generation != nil:
				id = ev.Generation.ID
			case ev.Voice != nil:
				id = ev.Voice.ID
			}
			at := time.Unix(signed, 0)
			if a.json {
				return a.writeJSON(map[string]any{"valid": true, "event": ev.Name, "id": id, "signedAt": at.UTC()})
			}
			a.printf("valid: %s of %s, signed %s\n", printable(string(ev.Name)), printable(id), at.Local().Format(time.RFC3339))
			return nil
		}),
	}
	cmd.Flags().StringVar(&secret, "secret", "", "the signing secret (default: $"+envWebhookSecret+")")
	cmd.Flags().DurationVar(&tolerance, "tolerance", webhook.DefaultTolerance, "how old (or how far ahead) the timestamp may be")
	cmd.Flags().BoolVar(&ignoreAge, "ignore-age", false, "check the signature of a delivery however old it is")
	return cmd
}

// readDelivery reads a raw HTTP request and its body from r.
func readDelivery(r io.Reader) (*http.Request, []byte, error) {
	req, err := http.ReadRequest(bufio.NewReader(r))
	if err != nil {
		return nil, nil, err
	}
	defer req.Body.Close()
	body, err := io.ReadAll(io.LimitReader(req.Body, webhook.DefaultMaxBodyBytes+1))
	if err != nil {
		return nil, nil, err
	}
	if len(body) > webhook.DefaultMaxBodyBytes {
		return nil, nil, fmt.Errorf("body larger than %d bytes", webhook.DefaultMaxBodyBytes)
	}
	return req, body, nil
}
