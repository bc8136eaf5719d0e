package refserver

import (
	"context"
	"net/http"
	"strconv"

	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/openapi"
)

// specResponse serves openapi.json byte for byte, rather than re-encoding
// it through a map, so callers read exactly the contract.
type specResponse struct{}

// VisitGetOpenAPIResponse writes the embedded contract.
func (specResponse) VisitGetOpenAPIResponse(w http.ResponseWriter) error {
	spec := openapi.Spec()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(spec)))
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(spec)
	return err
}

// GetOpenAPI answers GET /v3/openapi.json with the contract.
func (s *Server) GetOpenAPI(ctx context.Context, _ api.GetOpenAPIRequestObject) (api.GetOpenAPIResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return err, nil
	}
	return specResponse{}, nil
}
