package upload_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"log"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/upload"
)

// samplePNG returns a small 32×32 PNG of 4,201 bytes. It is stored without
// compression so that its size does not depend on the Go release.
func samplePNG() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 32, 32))
	for i := range img.Pix {
		img.Pix[i] = byte(i)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.NoCompression}
	if err := enc.Encode(&buf, img); err != nil {
		log.Fatal(err)
	}
	return buf.Bytes()
}

func ExampleFile() {
	// An in-process test server; a real program calls client.New("").
	srv, err := clienttest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	dir, err := os.MkdirTemp("", "upload-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "logo.png")
	if err := os.WriteFile(path, samplePNG(), 0o600); err != nil {
		log.Fatal(err)
	}

	// The media type is detected from the file's first bytes.
	f, err := upload.File(context.Background(), c, path)
	if err != nil {
		log.Fatal(err)
	}
	// f.ID is random (file_…); pass it in a feature's arguments.
	fmt.Println(strings.HasPrefix(f.ID, "file_"), f.Size)
	// Output: true 4201
}

func ExampleReader() {
	// An in-process test server; a real program calls client.New("").
	srv, err := clienttest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	script := []byte(strings.Repeat("Welcome to the show.\n", 100))

	// fn is not called after Reader returns, so the last values are safe
	// to read once it has.
	var sent, total int64
	f, err := upload.Reader(context.Background(), c, bytes.NewReader(script), int64(len(script)),
		"", // detect the media type from the first 512 bytes
		upload.WithProgress(func(s, t int64) { sent, total = s, t }),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.HasPrefix(f.ID, "file_"))
	fmt.Printf("sent %d of %d bytes\n", sent, total)
	// Output:
	// true
	// sent 2100 of 2100 bytes
}

func ExampleWithClientOptions() {
	// An in-process test server; a real program calls client.New("").
	srv, err := clienttest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	logo := samplePNG()

	// Upload options configure the upload; client options reach its
	// requests (the reservation and the PUT) only through WithClientOptions.
	f, err := upload.Reader(context.Background(), c, bytes.NewReader(logo), int64(len(logo)), "image/png",
		upload.WithClientOptions(client.WithTransferTimeout(time.Minute), client.WithMaxRetries(2)),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(strings.HasPrefix(f.ID, "file_"), f.Size)
	// Output: true 4201
}

func ExampleMultipart() {
	// An in-process test server; a real program calls client.New("").
	srv, err := clienttest.Start()
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	c := srv.Client()
	logo := samplePNG()
	script := "Welcome to the show.\n"

	// One request carries both files; ContentType "" means detect it.
	files, err := upload.Multipart(context.Background(), c, []upload.Part{
		{Name: "logo.png", Reader: bytes.NewReader(logo), Size: int64(len(logo))},
		{Name: "script.txt", Reader: strings.NewReader(script), Size: int64(len(script))},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The ids come back in the order of the parts.
	fmt.Println(len(files), "files")
	for _, f := range files {
		fmt.Println(f.OriginalName, f.Size, strings.HasPrefix(f.ID, "file_"))
	}
	// Output:
	// 2 files
	// logo.png 4201 true
	// script.txt 21 true
}
