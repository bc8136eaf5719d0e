package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/internal/api"
)

// answer is an operation's HTTP answer: status and body exactly as its route
// would write them.
type answer struct {
	status int
	body   []byte
}

// record renders an operation's response object through its own Visit method,
// the code the HTTP route runs, so a tool can never answer differently from
// its route. visit is the response interface's method expression, for example
// api.GetGenerationResponseObject.VisitGetGenerationResponse, so R is always
// an interface type. An error that is itself a response object (a server may
// return its error answers that way) is rendered like one, as the route's
// error handler would.
func record[R any](resp R, err error, visit func(R, http.ResponseWriter) error) (answer, error) {
	if err != nil {
		var asResp R
		if !errors.As(err, &asResp) {
			return answer{}, err
		}
		resp = asResp
	}
	if any(resp) == nil {
		return answer{}, fmt.Errorf("operation returned no response")
	}
	rec := httptest.NewRecorder()
	if err := visit(resp, rec); err != nil {
		return answer{}, fmt.Errorf("render response: %w", err)
	}
	return answer{status: rec.Code, body: bytes.TrimSpace(rec.Body.Bytes())}, nil
}

// toolResult turns an answer into a tool result: the route's body as
// structured content, a short summary, and the body again as text for clients
// that read text only (the MCP specification asks for it). A 4xx or 5xx answer
// is a tool error the agent can read and act on, not a protocol error.
func toolResult(a answer, summarize func([]byte) string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{}
	if json.Valid(a.body) {
		res.StructuredContent = json.RawMessage(a.body)
	}
	var summary string
	if a.status >= 300 {
		res.IsError = true
		summary = errorSummary(a)
	} else {
		summary = summarize(a.body)
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: summary}}
	if len(a.body) > 0 {
		res.Content = append(res.Content, &mcp.TextContent{Text: string(a.body)})
	}
	return res
}

// failure is the tool result of an operation that failed without an HTTP
// answer (the route would answer 500).
func failure(err error) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: "HTTP 500 internal: " + err.Error()}},
	}
}

// errorSummary reads the contract's error body. A 402 is told by its
// required and balance, which say how much is missing, in place of its
// message, which states the same amounts: each is said once.
func errorSummary(a answer) string {
	var e api.InsufficientBalanceError // a superset of the other error bodies
	if err := json.Unmarshal(a.body, &e); err != nil || e.Error.Code == "" {
		text := strings.TrimSpace(string(a.body))
		if text == "" {
			text = http.StatusText(a.status)
		}
		return fmt.Sprintf("HTTP %d: %s", a.status, text)
	}
	msg := e.Error.Message
	if a.status == http.StatusPaymentRequired {
		msg = fmt.Sprintf("this call costs %s; the balance is %s", exactUSD(e.Error.Required), exactUSD(e.Error.Balance))
	}
	return fmt.Sprintf("HTTP %d %s: %s", a.status, e.Error.Code, msg)
}

func usd(v float64) string { return fmt.Sprintf("%.2f USD", v) }

// exactUSD is v with cents always (0.20 USD) and any further digits
// (0.0375 USD), so an amount is never rounded away.
func exactUSD(v float64) string {
	whole, frac, _ := strings.Cut(strconv.FormatFloat(v, 'f', -1, 64), ".")
	for len(frac) < 2 {
		frac += "0"
	}
	return whole + "." + frac + " USD"
}

// decode reads a success body into T for a summary; a body that does not
// parse yields the zero T, and the summary degrades rather than fails.
func decode[T any](body []byte) T {
	var v T
	_ = json.Unmarshal(body, &v)
	return v
}

func summarizeGeneration(body []byte) string {
	g := decode[api.GenerationEnvelope](body).Generation
	s := fmt.Sprintf("Generation %s (%s) is %s; %s charged.", g.ID, g.Feature, g.Status, usd(g.BalanceUsed))
	switch g.Status {
	case mediagen.GenerationStatusPending, mediagen.GenerationStatusRunning:
		s += " Poll get_generation with this id every few seconds until it is done, error or timeout."
	case mediagen.GenerationStatusDone:
		if url := outputURL(g.Output); url != "" {
			s += " Output: " + url
		}
	default:
		if g.Error != "" {
			s += " Error: " + g.Error + " (refunded)."
		}
	}
	return s
}

// outputURL picks the asset of a finished generation, whichever kind it is.
func outputURL(o mediagen.Output) string {
	if u := o.URL(); u != "" {
		return u
	}
	return o.Text
}

func summarizeGenerationList(body []byte) string {
	l := decode[api.GenerationList](body)
	s := fmt.Sprintf("%d generations, newest first.", len(l.Generations))
	if l.NextCursor != nil && *l.NextCursor != "" {
		s += " More with cursor " + *l.NextCursor + "."
	} else {
		s += " Last page."
	}
	return s
}

func summarizeDeleted(body []byte) string {
	if decode[api.Success](body).Success {
		return "Generation deleted; its assets are removed. Nothing is refunded."
	}
	return "Generation not deleted."
}

func summarizeTemplates(body []byte) string {
	l := decode[api.TemplateList](body)
	titles := make([]string, 0, len(l.Templates))
	for _, t := range l.Templates {
		titles = append(titles, t.Title)
	}
	return fmt.Sprintf("%d templates: %s. Resolve a preview id with get_template_prompt.", len(l.Templates), strings.Join(titles, ", "))
}

func summarizeTemplatePrompt(body []byte) string {
	p := decode[api.TemplatePreviewEnvelope](body).Preview
	return fmt.Sprintf("Prompt for %s (%s), to send as args.prompt: %s", p.Title, p.Feature, p.Prompt)
}

func summarizePricing(body []byte) string {
	return fmt.Sprintf("Prices of %d features on this plan, in USD.", len(decode[api.PricingTable](body).Prices))
}

func summarizeUploadURL(body []byte) string {
	u := decode[mediagen.UploadURL](body)
	return fmt.Sprintf("File %s reserved. %s the bytes to uploadUrl within %d s with exactly Content-Type: %s and Content-Length: %d and no Authorization header; then pass %s as a file id.",
		u.File.ID, u.Method, u.ExpiresIn, u.Headers.ContentType, u.Headers.ContentLength, u.File.ID)
}

func summarizeVoices(body []byte) string {
	return fmt.Sprintf("%d voices; pass a voice's id (or a catalog slug) as voiceId.", len(decode[api.VoiceList](body).Voices))
}
