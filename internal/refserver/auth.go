package refserver

import (
	"context"
	"net/http"

	"github.com/mediagen/mediagen-go/internal/api"
)

// authenticate resolves the Authorization header, which carries the raw API
// key: no scheme, so "Bearer <key>" is refused like any unknown key. The
// key is never echoed in the answer.
func (s *Server) authenticate(r *http.Request) (*project, *apiError) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 || values[0] == "" {
		return nil, newError(http.StatusUnauthorized, api.ErrorCodeUnauthorized, "missing API key: send it in the Authorization header, without a Bearer prefix")
	}
	if len(values) > 1 {
		return nil, newError(http.StatusUnauthorized, api.ErrorCodeUnauthorized, "send exactly one Authorization header")
	}
	s.mu.Lock()
	p, ok := s.projects[values[0]]
	s.mu.Unlock()
	if !ok {
		return nil, newError(http.StatusUnauthorized, api.ErrorCodeUnauthorized, "invalid API key: send the key alone in the Authorization header, without a Bearer prefix")
	}
	return p, nil
}

// caller returns the project the request was authenticated as, or the 401
// answer when the context carries none (a strict method called from outside
// the HTTP stack without authentication).
func caller(ctx context.Context) (*project, *apiError) {
	if p, ok := ctx.Value(projectKey{}).(*project); ok && p != nil {
		return p, nil
	}
	return nil, newError(http.StatusUnauthorized, api.ErrorCodeUnauthorized, "missing API key")
}

// baseFrom returns the scheme and host absolute URLs are built from: the
// request's [baseURL], which serveAPI stores in the context.
func baseFrom(ctx context.Context) string {
	if b, ok := ctx.Value(baseKey{}).(string); ok {
		return b
	}
	return ""
}
