// Package agent serves the reference server's agent endpoint (POST /v3/mcp):
// a stateless MCP streamable-HTTP server whose tools call the same strict
// operations as the HTTP routes, so an agent is validated, billed and limited
// exactly like any other caller.
//
// Tool handlers receive a context that carries the values of the HTTP
// request's context (the SDK connects each stateless request's temporary
// session with the request context and derives handler contexts from it), so
// whatever the server's middleware stored there, such as the authenticated
// project, reaches the operations unchanged.
package agent

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediagen/mediagen-go/internal/api"
)

// serverName and serverVersion identify the endpoint in the MCP handshake;
// the version follows the contract's info.version.
const (
	serverName    = "mediagen"
	serverVersion = "1.0.0"
)

const instructions = `Media generation tools. Generations are asynchronous: a generate_* tool or create_generation submits the job, charges the balance and returns the generation id at once with status "pending"; poll get_generation every few seconds (5 to 10 for video) until the status is done, error or timeout (error and timeout are refunded). Reference images and audio are file ids: reserve one with create_upload_url and PUT the bytes to the returned uploadUrl with exactly the returned headers. Prices are listed by get_pricing; ready-made prompts by list_templates and get_template_prompt; voices for voiceId by list_voices.`

// New returns the stateless MCP streamable-HTTP handler of the agent endpoint.
// Every tool calls ops (the reference server's strict implementation), passing
// the incoming request's context, so validation, billing and limits are identical to the HTTP routes.
//
// Responses are JSON-RPC messages on a text/event-stream. There is no session:
// GET, DELETE and any other method but POST answer 405 with the contract's
// error body. Authentication is the caller's middleware's job; New trusts the
// request it is given.
func New(ops api.StrictServerInterface) http.Handler {
	server := mcp.NewServer(&mcp.Implementation{Name: serverName, Version: serverVersion},
		&mcp.ServerOptions{Instructions: instructions})
	addTools(server, ops)
	stream := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{
			Stateless: true,
			// Cancel in-flight operations when the client goes away, as an HTTP route would.
			PropagateRequestCancellation: true,
		})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			methodNotAllowed(w)
			return
		}
		stream.ServeHTTP(w, r)
	})
}

// methodNotAllowed answers with the contract's JSON error body rather than the
// SDK's plain-text one, so clients parse every error of the service alike.
func methodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", http.MethodPost)
	body := api.GetAgent405JSONResponse{MethodNotAllowedJSONResponse: api.MethodNotAllowedJSONResponse{
		Error: api.ErrorDetail{
			Code:    api.ErrorCodeMethodNotAllowed,
			Message: "the agent endpoint is stateless: only POST is allowed",
		},
	}}
	_ = body.VisitGetAgentResponse(w)
}
