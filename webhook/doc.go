// Package webhook verifies and receives the signed webhook deliveries of the
// media generation service. It depends on the standard library only, so a
// small receiver pulls in nothing else.
//
// The service posts a JSON event ({"event": "generation.done", "generation":
// {...}}, or "voice" for voice events) with two headers: HeaderTimestamp, the
// unix time of sending, and HeaderSignature, one or more sha256=<hex> entries,
// each the HMAC-SHA256 of "<timestamp>.<raw body>" under the project's
// webhook secret. During the 24 hours after a secret rotation a delivery
// carries one entry per secret.
//
// Verify checks a delivery; Parse checks it and decodes the Event; Handler
// does both behind an http.Handler that also caps the body and the time to
// read it, drops repeated deliveries and answers within the service's
// 5-second window:
//
//	h, err := webhook.Handler(os.Getenv("MEDIAGEN_WEBHOOK_SECRET"),
//		func(ctx context.Context, ev *webhook.Event) error {
//			if ev.Name == webhook.EventGenerationDone {
//				return download(ctx, ev.Generation) // outputs expire: fetch them now
//			}
//			return nil
//		})
//	if err != nil {
//		return err // no secret, or an invalid option
//	}
//	http.Handle("/webhooks", h)
//
// With a framework of your own, read the raw body and call Parse:
//
//	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, webhook.DefaultMaxBodyBytes))
//	...
//	ev, err := webhook.Parse(body, r.Header, secret)
//	if err != nil {
//		http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
//		return
//	}
//
// Verification needs the body byte for byte as received. Replicas of a
// receiver share an SQLStore (WithStore) to drop each other's repeats; the
// program imports the database driver, not this package. Sign,
// SignatureHeader and SetHeaders sign as the service does, for tests.
package webhook
