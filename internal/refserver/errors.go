package refserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/mediagen/mediagen-go/internal/api"
)

// apiError is an error answer. It implements every operation's response
// interface, so a handler can answer any status the interface document names
// with the body DESIGN.md fixes: {"error":{"code","message"}}, or the 402
// shape when body is set.
type apiError struct {
	status     int
	code       api.ErrorCode
	message    string
	retryAfter int    // seconds; sets Retry-After when positive
	allow      string // sets Allow (a 405) when not empty
	body       any    // replaces the standard body (the 402 shape)
}

func (e *apiError) Error() string {
	return fmt.Sprintf("%d %s: %s", e.status, e.code, e.message)
}

// codeInternal is the code of a 500 answer.
const codeInternal api.ErrorCode = "internal_error"

func newError(status int, code api.ErrorCode, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

// invalidf is the 400 answer: a bad argument, nothing charged.
func invalidf(format string, args ...any) *apiError {
	return newError(http.StatusBadRequest, api.ErrorCodeInvalidArgument, format, args...)
}

// notFoundf is the 404 answer.
func notFoundf(format string, args ...any) *apiError {
	return newError(http.StatusNotFound, api.ErrorCodeNotFound, format, args...)
}

// forbiddenf is the 403 answer of the storage host.
func forbiddenf(format string, args ...any) *apiError {
	return newError(http.StatusForbidden, api.ErrorCodeForbidden, format, args...)
}

// insufficientBalance is the 402 answer, with the documented body. The
// message states each amount once, as required and balance carry them.
func insufficientBalance(required, balance int64) *apiError {
	msg := fmt.Sprintf("this call costs %s USD; the balance is %s USD", formatUnits(required), formatUnits(balance))
	return &apiError{
		status:  http.StatusPaymentRequired,
		code:    api.ErrorCodeInsufficientBalance,
		message: msg,
		body: api.InsufficientBalanceError{Error: api.InsufficientBalanceDetail{
			Code:     api.InsufficientBalanceDetailCodeInsufficientBalance,
			Message:  msg,
			Required: fromUnits(required),
			Balance:  fromUnits(balance),
		}},
	}
}

// write sends the error answer; the body is encoded first so that an
// encoding failure leaves the status unwritten.
func (e *apiError) write(w http.ResponseWriter) error {
	body := e.body
	if body == nil {
		body = api.Error{Error: api.ErrorDetail{Code: e.code, Message: e.message}}
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(body); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	if e.allow != "" {
		w.Header().Set("Allow", e.allow)
	}
	w.WriteHeader(e.status)
	_, err := buf.WriteTo(w)
	return err
}

// writeError answers err as JSON: an *apiError as itself, anything else as
// a 500 that does not leak internals.
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = newError(http.StatusInternalServerError, codeInternal, "internal error")
	}
	_ = ae.write(w)
}

// The Visit methods make *apiError an answer of every operation, so a
// handler returns its errors as its response object.
func (e *apiError) VisitUploadFilesResponse(w http.ResponseWriter) error        { return e.write(w) }
func (e *apiError) VisitCreateUploadURLResponse(w http.ResponseWriter) error    { return e.write(w) }
func (e *apiError) VisitListGenerationsResponse(w http.ResponseWriter) error    { return e.write(w) }
func (e *apiError) VisitCreateGenerationResponse(w http.ResponseWriter) error   { return e.write(w) }
func (e *apiError) VisitDeleteGenerationResponse(w http.ResponseWriter) error   { return e.write(w) }
func (e *apiError) VisitGetGenerationResponse(w http.ResponseWriter) error      { return e.write(w) }
func (e *apiError) VisitDeleteAgentResponse(w http.ResponseWriter) error        { return e.write(w) }
func (e *apiError) VisitGetAgentResponse(w http.ResponseWriter) error           { return e.write(w) }
func (e *apiError) VisitCallAgentResponse(w http.ResponseWriter) error          { return e.write(w) }
func (e *apiError) VisitGetOpenAPIResponse(w http.ResponseWriter) error         { return e.write(w) }
func (e *apiError) VisitGetPricingResponse(w http.ResponseWriter) error         { return e.write(w) }
func (e *apiError) VisitListTemplatesResponse(w http.ResponseWriter) error      { return e.write(w) }
func (e *apiError) VisitGetTemplatePreviewResponse(w http.ResponseWriter) error { return e.write(w) }
func (e *apiError) VisitListVoicesResponse(w http.ResponseWriter) error         { return e.write(w) }
func (e *apiError) VisitCreateVoiceResponse(w http.ResponseWriter) error        { return e.write(w) }
func (e *apiError) VisitDeleteVoiceResponse(w http.ResponseWriter) error        { return e.write(w) }
func (e *apiError) VisitGetVoiceResponse(w http.ResponseWriter) error           { return e.write(w) }
func (e *apiError) VisitUnfavoriteVoiceResponse(w http.ResponseWriter) error    { return e.write(w) }
func (e *apiError) VisitFavoriteVoiceResponse(w http.ResponseWriter) error      { return e.write(w) }
