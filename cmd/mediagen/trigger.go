package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/webhook"
)

// envWebhookSecret is where trigger and verify read the signing secret when
// --secret is not given; `mediagen serve` prints it.
const envWebhookSecret = "MEDIAGEN_WEBHOOK_SECRET"

// events are the webhook events the service sends.
var events = []webhook.EventName{
	webhook.EventGenerationDone, webhook.EventGenerationError, webhook.EventGenerationTimeout,
	webhook.EventVoiceDone, webhook.EventVoiceError,
}

// ackWindow is how long the service waits for a receiver's answer.
const ackWindow = 5 * time.Second

// triggerCommand is `mediagen trigger EVENT --forward-to URL`.
func (a *app) triggerCommand() *cobra.Command {
	var (
		url, secret, id, save string
		featureName           string
	)
	cmd := &cobra.Command{
		Use:   "trigger EVENT --forward-to URL [--secret S] [--id ID] [--feature F] [--save FILE]",
		Short: "Send a signed test webhook delivery to your receiver",
		Long: `Sends your webhook receiver the delivery the service would send for EVENT
(generation.done, generation.error, generation.timeout, voice.done or
voice.error): a POST of {"event": ..., "generation": {...}} (or "voice"), a
plausible generation or voice clone with id --id, signed with the secret
(--secret, or $MEDIAGEN_WEBHOOK_SECRET) as the service signs: the headers
X-Service-Timestamp and X-Service-Signature. It prints the receiver's answer.
Nothing is sent to the service and nothing is charged.

Exit code 0 when the receiver answered 2xx within the service's 5 seconds,
1 when it answered anything else or too late, 6 when it cannot be reached.

--save FILE also writes the delivery to FILE as a raw HTTP request (request
line, headers, blank line, body), the format 'mediagen verify' reads and
httputil.DumpRequest writes; without --forward-to it only writes the file.

  mediagen trigger generation.done --forward-to http://localhost:8000/hooks --id gen_123`,
		Args: cobra.ExactArgs(1),
		RunE: a.runE(func(cmd *cobra.Command, args []string) error {
			event := webhook.EventName(args[0])
			if !slices.Contains(events, event) {
				return usageErrorf("unknown event %q; the events are %s", args[0], joinEvents())
			}
			if url == "" && save == "" {
				return usageErrorf("--forward-to URL is required (or --save FILE to only write the delivery)")
			}
			if secret == "" {
				secret = os.Getenv(envWebhookSecret)
			}
			if secret == "" {
				return usageErrorf("no signing secret: pass --secret or set %s", envWebhookSecret)
			}
			f, err := feature(featureName)
			if err != nil {
				return err
			}
			body, err := deliveryBody(event, id, f, time.Now())
			if err != nil {
				return err
			}
			target := url
			if target == "" {
				target = "http://localhost/webhooks" // the request line of a delivery only saved
			}
			req, err := signedRequest(cmd.Context(), target, secret, body)
			if err != nil {
				return usageErrorf("--forward-to %q: %v", url, err)
			}
			if save != "" {
				if err := saveDelivery(save, req, body); err != nil {
					return err
				}
			}
			if url == "" {
				a.note("wrote %s", save)
				return nil
			}
			return a.send(req, url)
		}),
	}
	cmd.Flags().StringVar(&url, "forward-to", "", "the receiver's URL, such as http://localhost:8000/hooks")
	cmd.Flags().StringVar(&secret, "secret", "", "the signing secret (default: $"+envWebhookSecret+")")
	cmd.Flags().StringVar(&id, "id", "", "the generation's or voice's id (default: a made-up one)")
	cmd.Flags().StringVar(&featureName, "feature", string(mediagen.FeatureImageGeneration), "the generation's feature, which decides its kind and output")
	cmd.Flags().StringVar(&save, "save", "", "also write the delivery to FILE as a raw HTTP request, for mediagen verify")
	return cmd
}

func joinEvents() string {
	names := make([]string, len(events))
	for i, e := range events {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

// signedRequest is the POST of body to url, signed with secret now, as the
// service sends a delivery.
func signedRequest(ctx context.Context, url, secret string, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" || req.URL.Host == "" {
		return nil, errors.New("want an http or https URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "mediagen-cli/"+version()+" (test delivery)")
	webhook.SetHeaders(req.Header, []string{secret}, time.Now(), body)
	return req, nil
}

// send posts req and prints the receiver's answer.
func (a *app) send(req *http.Request, url string) error {
	hc := &http.Client{Timeout: ackWindow}
	resp, err := hc.Do(req)
	if err != nil {
		if cerr := req.Context().Err(); cerr != nil {
			return cerr // interrupted: not the receiver's doing
		}
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			return &exitError{code: exitOther, err: fmt.Errorf("the receiver at %s did not answer within %v, the service's window", url, ackWindow)}
		}
		return &exitError{code: exitService, err: fmt.Errorf("the receiver at %s cannot be reached: %w", url, unwrapURLError(err))}
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	text := strings.TrimSpace(string(answer))
	if a.json {
		if err := a.writeJSON(map[string]any{"status": resp.StatusCode, "body": text}); err != nil {
			return err
		}
	} else {
		a.printf("%s\n", printable(resp.Status))
		if text != "" {
			a.printf("%s\n", printableText(text))
		}
	}
	if resp.StatusCode/100 != 2 {
		return &exitError{code: exitOther, err: fmt.Errorf("the receiver answered %s; the service would retry once after 2 s, then drop the delivery", resp.Status)}
	}
	return nil
}

// isTimeout reports whether err is a network time-out.
func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}

// unwrapURLError drops the *url.Error wrapping, whose message repeats the
// method and URL.
func unwrapURLError(err error) error {
	var inner interface{ Unwrap() error }
	if errors.As(err, &inner) {
		if u := inner.Unwrap(); u != nil {
			return u
		}
	}
	return err
}

// deliveryBody is the body of a delivery of event: what a real one carries,
// a done, failed or timed-out generation of feature, or a voice clone.
func deliveryBody(event webhook.EventName, id string, f mediagen.Feature, now time.Time) ([]byte, error) {
	now = now.UTC().Truncate(time.Second)
	requested := now.Add(-12 * time.Second)
	if strings.HasPrefix(string(event), "voice.") {
		if id == "" {
			id = "voice_test_" + randomHex(6)
		}
		v := mediagen.Voice{ID: id, Owner: mediagen.VoiceOwnerProject, Status: mediagen.VoiceStatusDone,
			Name: "Test voice", Description: "a test delivery from mediagen trigger",
			RequestDate: requested, ResponseDate: now}
		if event == webhook.EventVoiceError {
			v.Status, v.Error = mediagen.VoiceStatusError, "training failed (test delivery; refunded)"
		}
		return voiceBody(event, &v)
	}
	if id == "" {
		id = "gen_test_" + randomHex(6)
	}
	g := mediagen.Generation{ID: id, ProjectID: "proj_test", Feature: f, Kind: client.KindOf(f),
		Params: map[string]any{"prompt": "a test delivery from mediagen trigger"}, BalanceUsed: 0.04,
		RequestDate: requested, ResponseDate: now, ExpiresAt: requested.Add(24 * time.Hour)}
	if k := g.Kind; k == mediagen.KindAudio || f == mediagen.FeatureVideoAvatar || f == mediagen.FeatureLegacyAvatarVideo {
		g.Params = map[string]any{"voiceId": "ava-warm-narrator", "script": "A test delivery from mediagen trigger."}
	}
	switch event {
	case webhook.EventGenerationDone:
		g.Status, g.Output = mediagen.GenerationStatusDone, output(g.Kind, id)
	case webhook.EventGenerationError:
		g.Status, g.Error = mediagen.GenerationStatusError, "render failed (test delivery; refunded)"
	default:
		g.Status, g.Error = mediagen.GenerationStatusTimeout, "render timed out (test delivery; refunded)"
	}
	return generationBody(event, &g)
}

// generationBody is the body of a delivery of event for g, as the service
// sends it.
func generationBody(event webhook.EventName, g *mediagen.Generation) ([]byte, error) {
	return json.Marshal(struct {
		Event      webhook.EventName    `json:"event"`
		Generation *mediagen.Generation `json:"generation"`
	}{event, g})
}

// voiceBody is the body of a delivery of event for the voice clone v.
func voiceBody(event webhook.EventName, v *mediagen.Voice) ([]byte, error) {
	return json.Marshal(struct {
		Event webhook.EventName `json:"event"`
		Voice *mediagen.Voice   `json:"voice"`
	}{event, v})
}

// output is a plausible output of a kind; its URLs lead nowhere.
func output(k mediagen.Kind, id string) mediagen.Output {
	base := "https://storage.example.com/outputs/" + id
	switch k {
	case mediagen.KindVideo:
		return mediagen.Output{Video: base + ".mp4", MIME: "video/mp4", Poster: base + ".poster.png", DurationMs: 5000, Width: 1280, Height: 720}
	case mediagen.KindAudio:
		return mediagen.Output{Audio: base + ".wav", MIME: "audio/wav"}
	case mediagen.KindText:
		return mediagen.Output{Text: "A test delivery from mediagen trigger.", MIME: "text/plain"}
	}
	return mediagen.Output{Image: base + ".png", MIME: "image/png"}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// saveDelivery writes req, whose body is body, to path as a raw HTTP
// request.
func saveDelivery(path string, req *http.Request, body []byte) error {
	out := req.Clone(req.Context())
	out.Body = io.NopCloser(bytes.NewReader(body))
	var buf bytes.Buffer
	if err := out.Write(&buf); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o600)
}
