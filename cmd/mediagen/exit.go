package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/internal/refserver/serve"
	"github.com/mediagen/mediagen-go/poll"
	"github.com/mediagen/mediagen-go/upload"
)

// The exit codes; the package documentation says what each means.
const (
	exitOther       = 1
	exitUsage       = 2
	exitAuth        = 3
	exitBalance     = 4
	exitNotFound    = 5
	exitService     = 6
	exitInterrupted = 130
)

// exitError is an error whose exit code is decided where it arose.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErrorf is an error of the command line: exit code 2.
func usageErrorf(format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...)}
}

// report prints err on stderr as one line and returns the exit code that
// says what failed.
func report(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	var usage *serve.UsageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0 // serve printed its usage
	case errors.As(err, &usage):
		return exitUsage // package flag printed the error and the usage
	}
	code := exitCode(err)
	msg := err.Error()
	var coded *exitError
	if code == exitInterrupted && !errors.As(err, &coded) {
		msg = "interrupted" // rather than each layer's account of the cancelled context
	}
	fmt.Fprintf(stderr, "mediagen: %s\n", oneLine(msg))
	return code
}

// signedQuery is the query of a URL in an error message: signed storage
// URLs carry their credential there.
var signedQuery = regexp.MustCompile(`(https?://[^\s"?]+)\?[^\s"]*`)

// oneLine makes an error message fit one line of stderr: joined errors
// become "; "-separated, the SDK's own "mediagen: " prefixes go (the line
// has one), URL queries, which may be signatures, are cut, and control
// characters, which may come from the service's message, are escaped.
func oneLine(msg string) string {
	msg = strings.ReplaceAll(msg, "mediagen: ", "")
	msg = signedQuery.ReplaceAllString(msg, "$1?…")
	return printable(strings.Join(strings.Fields(strings.ReplaceAll(msg, "\n", "; ")), " "))
}

// exitCode classifies err, from the most specific cause to the least.
func exitCode(err error) int {
	var (
		coded     *exitError
		apiErr    *client.APIError
		storeErr  *client.StorageError
		uncertain *client.UncertainError
		pathErr   *fs.PathError
		netErr    net.Error
		urlErr    *url.Error
	)
	switch {
	case errors.As(err, &coded):
		return coded.code
	case errors.Is(err, context.Canceled):
		return exitInterrupted
	case errors.Is(err, client.ErrUnauthorized):
		return exitAuth
	case errors.Is(err, client.ErrInsufficientBalance):
		return exitBalance
	case errors.Is(err, client.ErrNotFound), errors.Is(err, poll.ErrGone):
		return exitNotFound
	case errors.Is(err, client.ErrInvalidArgument), errors.Is(err, client.ErrPermissionRequired),
		errors.Is(err, upload.ErrTooLarge), errors.Is(err, upload.ErrEmpty), errors.Is(err, upload.ErrUnsupportedType):
		return exitUsage
	case errors.Is(err, poll.ErrMaxWait):
		return exitOther // --max-wait passed; the work goes on at the service
	case errors.Is(err, client.ErrRateLimited), errors.As(err, &uncertain):
		return exitService
	case errors.As(err, &apiErr) && apiErr.StatusCode >= 500:
		return exitService
	case errors.As(err, &storeErr) && (storeErr.StatusCode >= 500 || storeErr.StatusCode == 429 || storeErr.Retryable):
		return exitService
	case errors.As(err, &pathErr):
		return exitOther // a file here (--save, --dir): its syscall.Errno passes for a net.Error
	case errors.As(err, &netErr), errors.As(err, &urlErr), errors.Is(err, context.DeadlineExceeded):
		return exitService
	}
	return exitOther
}
