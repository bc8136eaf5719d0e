// Package otel holds the tests of the SDK's OpenTelemetry traces and
// metrics that need the OpenTelemetry SDK (an in-memory span exporter, a
// manual metric reader). It is a module of its own so that the SDK's
// go.mod needs only the OpenTelemetry API.
package otel
