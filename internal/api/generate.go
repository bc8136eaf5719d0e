// Package api is the typed HTTP client, the strict server interface and the
// wire-only request and response shapes, generated from openapi/openapi.json
// over the public models of the root package mediagen. Nothing here is
// edited by hand: change the contract and run go generate.
package api

//go:generate go tool -modfile=../tools/go.mod oapi-codegen -config api.cfg.yaml ../../openapi/openapi.json
