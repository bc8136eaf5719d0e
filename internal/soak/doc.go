// Package soak holds the billing soak test: many concurrent charging calls
// against a reference server that drops, refuses and rate-limits requests,
// checked for orphaned charges, shared rows and an exact balance. It has no
// code of its own; run it with `go test ./internal/soak/` (longer with
// -soak.calls and -soak.clones).
package soak
