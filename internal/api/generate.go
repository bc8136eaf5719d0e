// Package api is the typed HTTP client and the strict server interface
// generated from openapi/openapi.json. The models live in package model.
// Nothing here is edited by hand: change the contract and run go generate.
package api

//go:generate go tool -modfile=../tools/go.mod oapi-codegen -config api.cfg.yaml ../../openapi/openapi.json
