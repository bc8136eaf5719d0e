package refserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"

	"github.com/mediagen/mediagen-go/internal/api"
)

// GetAgent answers GET /v3/mcp: the agent endpoint is stateless, so there
// is no stream to open.
func (s *Server) GetAgent(ctx context.Context, _ api.GetAgentRequestObject) (api.GetAgentResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return err, nil
	}
	return methodNotAllowed("GET"), nil
}

// DeleteAgent answers DELETE /v3/mcp: there is no session to end.
func (s *Server) DeleteAgent(ctx context.Context, _ api.DeleteAgentRequestObject) (api.DeleteAgentResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return err, nil
	}
	return methodNotAllowed("DELETE"), nil
}

func methodNotAllowed(method string) *apiError {
	e := newError(http.StatusMethodNotAllowed, api.ErrorCodeMethodNotAllowed,
		"%s is not allowed on /v3/mcp: the agent endpoint is stateless; POST one JSON-RPC message per request", method)
	e.allow = http.MethodPost // a 405 names the methods allowed (RFC 9110)
	return e
}

// CallAgent answers POST /v3/mcp by replaying the decoded JSON-RPC message,
// with the caller's headers and context, to the MCP handler. Its tools call
// back into this server with the same context, so they act as the same
// project under the same rules.
func (s *Server) CallAgent(ctx context.Context, req api.CallAgentRequestObject) (api.CallAgentResponseObject, error) {
	if _, err := caller(ctx); err != nil {
		return err, nil
	}
	orig, ok := ctx.Value(requestKey{}).(*http.Request)
	if !ok || req.Body == nil {
		return agentBadRequest("the body must be a JSON-RPC 2.0 message"), nil
	}
	// The generated decoder consumed the original body, so the message is
	// encoded again for the MCP handler.
	body, err := json.Marshal(req.Body)
	if err != nil {
		return agentBadRequest("the body must be a JSON-RPC 2.0 message"), nil
	}
	r := orig.Clone(ctx)
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	r.Header.Set("Content-Type", "application/json")

	rec := httptest.NewRecorder()
	s.agent.ServeHTTP(rec, r)
	switch rec.Code {
	case http.StatusOK:
		return api.CallAgent200TextEventStreamResponse{Body: bytes.NewReader(rec.Body.Bytes()), ContentLength: int64(rec.Body.Len())}, nil
	case http.StatusAccepted:
		return api.CallAgent202Response{}, nil
	case http.StatusBadRequest:
		return agentBadRequest(agentMessage(rec)), nil
	default:
		code, ok := agentCodes[rec.Code]
		if !ok {
			code = codeInternal
		}
		return newError(rec.Code, code, "%s", agentMessage(rec)), nil
	}
}

// agentBadRequest is the documented 400 answer of POST /v3/mcp.
func agentBadRequest(msg string) api.CallAgent400JSONResponse {
	return api.CallAgent400JSONResponse{Error: api.ErrorDetail{Code: api.ErrorCodeInvalidArgument, Message: msg}}
}

// agentMessage extracts a short message from the MCP handler's answer.
func agentMessage(rec *httptest.ResponseRecorder) string {
	msg := bytes.TrimSpace(rec.Body.Bytes())
	if len(msg) > 500 {
		msg = msg[:500]
	}
	if len(msg) == 0 {
		return http.StatusText(rec.Code)
	}
	return string(msg)
}

// agentCodes maps the error statuses of the MCP handler to error codes;
// any other status is answered as internal_error.
var agentCodes = map[int]api.ErrorCode{
	http.StatusUnauthorized:          api.ErrorCodeUnauthorized,
	http.StatusForbidden:             api.ErrorCodeForbidden,
	http.StatusNotFound:              api.ErrorCodeNotFound,
	http.StatusMethodNotAllowed:      api.ErrorCodeMethodNotAllowed,
	http.StatusRequestEntityTooLarge: api.ErrorCodePayloadTooLarge,
	http.StatusUnsupportedMediaType:  api.ErrorCodeUnsupportedMediaType,
	http.StatusTooManyRequests:       api.ErrorCodeRateLimited,
}
