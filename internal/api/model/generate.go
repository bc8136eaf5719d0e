// Package model holds the request, response and event types generated from
// openapi/openapi.json. It imports only the standard library.
package model

//go:generate go tool -modfile=../../tools/go.mod oapi-codegen -config model.cfg.yaml ../../../openapi/openapi.json
