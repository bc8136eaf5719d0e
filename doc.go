// Package mediagen holds the resources of the media generation service as Go
// values: [Generation] and its [Output], [Voice], [File], [UploadURL],
// [Template], [TemplatePreview] and [PricingEntry], with their status, kind,
// owner, unit and [Feature] types. Package client returns them, poll waits
// on them and webhook's events carry them.
//
// The types are generated from the contract (openapi/openapi.json), field
// by field: an optional field the service left out is its zero value. This
// package imports only the standard library.
package mediagen

//go:generate go tool -modfile=internal/tools/go.mod oapi-codegen -config internal/api/models.cfg.yaml openapi/openapi.json
