package webhook_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/webhook"
)

// A delivery as the service sends it: the raw body, a timestamp and a signature.
func ExampleVerify() {
	secret := "whsec_example"
	sentAt := time.Now()
	body := []byte(`{"event":"generation.done","generation":{"id":"gen_1","status":"done"}}`)
	header := http.Header{}
	webhook.SetHeaders(header, []string{secret}, sentAt, body)

	fmt.Println(webhook.Verify(body, header, secret))

	tampered := bytes.Replace(body, []byte("gen_1"), []byte("gen_2"), 1)
	err := webhook.Verify(tampered, header, secret)
	fmt.Println(errors.Is(err, webhook.ErrNoValidSignature))

	// A recorded delivery replayed an hour later.
	err = webhook.Verify(body, header, secret, webhook.WithNow(func() time.Time { return sentAt.Add(time.Hour) }))
	fmt.Println(errors.Is(err, webhook.ErrTimestampTooOld))
	// Output:
	// <nil>
	// true
	// true
}

// During a rotation the service signs with both secrets, and a receiver may
// still know only the old one, or already both.
func ExampleWithSecrets() {
	oldSecret, newSecret := "whsec_old", "whsec_new"
	sentAt := time.Now()
	body := []byte(`{"event":"voice.done","voice":{"id":"voc_1","name":"Narrator","owner":"project"}}`)
	header := http.Header{}
	webhook.SetHeaders(header, []string{newSecret, oldSecret}, sentAt, body)

	fmt.Println(webhook.Verify(body, header, oldSecret))
	fmt.Println(webhook.Verify(body, header, newSecret, webhook.WithSecrets(oldSecret)))
	// Output:
	// <nil>
	// <nil>
}

func ExampleParse() {
	secret := "whsec_example"
	body := []byte(`{"event":"generation.done","generation":{"id":"gen_1","kind":"image","status":"done","output":{"image":"https://assets.example/gen_1.png","mime":"image/png"}}}`)
	header := http.Header{}
	webhook.SetHeaders(header, []string{secret}, time.Now(), body)

	ev, err := webhook.Parse(body, header, secret)
	if err != nil {
		fmt.Println("refused:", err)
		return
	}
	switch ev.Name {
	case webhook.EventGenerationDone:
		fmt.Println(ev.Generation.ID, ev.Generation.Output.Image)
	case webhook.EventVoiceDone:
		fmt.Println("voice ready:", ev.Voice.ID)
	default:
		fmt.Println("not handled:", ev.Name)
	}
	// Output:
	// gen_1 https://assets.example/gen_1.png
}

func ExampleHandler() {
	secret := "whsec_example"
	h, err := webhook.Handler(secret, func(ctx context.Context, ev *webhook.Event) error {
		fmt.Println("received", ev.Name, ev.Generation.ID)
		return nil
	}, webhook.WithErrorFunc(func(ctx context.Context, ev *webhook.Event, err error) {
		fmt.Println("refused:", err) // the reason stays here; the answer is a bare 401
	}))
	if err != nil {
		log.Fatal(err)
	}

	// The service delivers an event, then delivers it again.
	body := []byte(`{"event":"generation.done","generation":{"id":"gen_1","status":"done"}}`)
	for range 2 {
		req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
		webhook.SetHeaders(req.Header, []string{secret}, time.Now(), body)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code)
	}

	// A request without a signature.
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body)))
	fmt.Println(rec.Code)
	// Output:
	// received generation.done gen_1
	// 200
	// 200
	// refused: webhook: missing signature header: X-Service-Timestamp
	// 401
}

// Two replicas of a receiver, each with its own connection to one database,
// share a SQLStore: a delivery resent to the other replica is dropped. SQLite
// here (the driver is modernc.org/sqlite); PostgreSQL takes
// mediagen.PostgreSQL and, say, github.com/jackc/pgx/v5/stdlib.
func ExampleSQLStore() {
	dir, err := os.MkdirTemp("", "webhooks")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	dsn := "file:" + filepath.Join(dir, "deliveries.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(5000)"
	secret := "whsec_example"

	var replicas []http.Handler
	for i := range 2 {
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			log.Fatal(err)
		}
		defer db.Close()
		store, err := webhook.OpenSQLStore(context.Background(), db, mediagen.SQLite)
		if err != nil {
			log.Fatal(err)
		}
		h, err := webhook.Handler(secret, func(ctx context.Context, ev *webhook.Event) error {
			fmt.Println("replica", i, "received", ev.Generation.ID)
			return nil
		}, webhook.WithStore(store))
		if err != nil {
			log.Fatal(err)
		}
		replicas = append(replicas, h)
	}

	body := []byte(`{"event":"generation.done","generation":{"id":"gen_1","status":"done"}}`)
	for _, h := range replicas {
		req := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
		webhook.SetHeaders(req.Header, []string{secret}, time.Now(), body)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		fmt.Println(rec.Code)
	}
	// Output:
	// replica 0 received gen_1
	// 200
	// 200
}

// The entry is what openssl computes:
//
//	printf %s '1763719200.{"event":"voice.done"}' | openssl dgst -sha256 -hmac whsec_example
func ExampleSign() {
	at := time.Unix(1763719200, 0)
	fmt.Println(webhook.Sign("whsec_example", at, []byte(`{"event":"voice.done"}`)))
	// Output:
	// sha256=45795630440c03c5f1f60a784dbcd2deb14a9ae454e5fff4ea9b3240a77c4f61
}
