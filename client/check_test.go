package client_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go"
	"github.com/mediagen/mediagen-go/client"
	"github.com/mediagen/mediagen-go/client/clienttest"
	"github.com/mediagen/mediagen-go/internal/feature"
)

// badArgs is one case of TestClientRefusesWhatTheServiceRefuses: args of
// feature that the service answers with 400.
type badArgs struct {
	name    string
	feature string // either spelling
	arg     string // the argument the message names
	args    client.Args
}

// badArgsCases derives from the feature table a case for every way each
// argument of every feature can break the contract, each with the rest of
// the arguments valid: missing when required, null, the wrong type, out of
// bounds, a fraction for an integer, too long, invisible text, outside its
// enum or pattern; plus an unknown argument per feature, in both
// spellings, and typed arguments.
func badArgsCases(img string) []badArgs {
	var cases []badArgs
	for _, f := range feature.All {
		valid := map[string]any{}
		for _, a := range f.Args {
			switch {
			case a.Name == "permissionConfirmed":
				valid[a.Name] = true
			case !a.Required:
			case a.Format == "file-id":
				valid[a.Name] = img
			case a.Format == "voice-id":
				valid[a.Name] = "ava-warm-narrator"
			default:
				valid[a.Name] = "p"
			}
		}
		add := func(name, spelling, arg string, v any, remove bool) {
			args := map[string]any{}
			for k, val := range valid {
				args[k] = val
			}
			if remove {
				delete(args, arg)
			} else {
				args[arg] = v
			}
			cases = append(cases, badArgs{f.Name + " " + arg + " " + name, spelling, arg,
				client.RawArgs{FeatureName: mediagen.Feature(spelling), Values: args}})
		}
		for _, a := range f.Args {
			if a.Required {
				add("missing", f.Name, a.Name, nil, true)
				add("missing, legacy spelling", f.Legacy, a.Name, nil, true)
			}
			add("null", f.Name, a.Name, nil, false)
			switch {
			case a.Type == "boolean":
				add("a string for a boolean", f.Name, a.Name, "true", false)
			case a.Type == "integer":
				add("a string for an integer", f.Name, a.Name, "5", false)
				add("a fraction", f.Name, a.Name, float64(a.Minimum)+0.5, false)
				add("below the minimum", f.Name, a.Name, a.Minimum-1, false)
				add("above the maximum", f.Name, a.Name, a.Maximum+1, false)
			default:
				add("a number for a string", f.Name, a.Name, 42, false)
				add("an empty string", f.Name, a.Name, "", false)
			}
			switch {
			case a.Enum != nil:
				add("outside the enum", f.Name, a.Name, "sideways", false)
			case a.Format == "hex-color":
				add("not a hex colour", f.Name, a.Name, "red", false)
			case a.Type == "string" && a.Format == "":
				add("too long", f.Name, a.Name, strings.Repeat("é", a.MaxLength+1), false)
				add("invisible", f.Name, a.Name, "\u200b \t\u00ad", false)
			}
		}
		add("unknown argument", f.Name, "aspect_ratio", "16:9", false)
		add("unknown argument, legacy spelling", f.Legacy, "aspect_ratio", "16:9", false)
	}
	typed := []struct {
		arg  string
		args client.Args
	}{
		{"mode", client.LogoRevealArgs{Image: img, Prompt: "p", Mode: "sideways"}},
		{"duration", client.ObjectRevealArgs{Image: img, Prompt: "p", Duration: 11}},
		{"aspectRatio", client.LogoRevealArgs{Image: img, Prompt: "p", AspectRatio: client.Aspect1x1}},
		{"prompt", client.ImageGenerationArgs{Prompt: "\u200b"}},
		{"image", client.AdArgs{Prompt: "p"}},
		{"script", client.VoiceoverArgs{VoiceID: "ava-warm-narrator"}},
		{"script", client.AvatarArgs{VoiceID: "ava-warm-narrator", Script: strings.Repeat("a", 5001), PermissionConfirmed: true}},
		{"resolution", client.AvatarArgs{VoiceID: "ava-warm-narrator", Script: "hi", Resolution: "4k"}},
	}
	for _, tc := range typed {
		cases = append(cases, badArgs{"typed " + string(tc.args.Feature()) + " " + tc.arg, string(tc.args.Feature()), tc.arg, tc.args})
	}
	return cases
}

// The client refuses, before any request and with nothing charged, exactly
// what the reference server answers 400 to, with the server's message.
func TestClientRefusesWhatTheServiceRefuses(t *testing.T) {
	srv, setupClient, ctx := setup(t)
	img := uploadPNG(t, ctx, setupClient)

	var requests atomic.Int32
	next := loopback(t)
	counting := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		requests.Add(1)
		return next.RoundTrip(r)
	})}
	c := srv.Client(client.WithHTTPClient(counting))
	raw := &http.Client{Transport: loopback(t)}

	cases := badArgsCases(img)
	covered := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.CreateGeneration(ctx, tc.args)
			require.ErrorIs(t, err, client.ErrInvalidArgument)
			var apiErr *client.APIError
			require.False(t, errors.As(err, &apiErr), "refused by the client, not the service: %v", err)
			prefix := client.ErrInvalidArgument.Error() + ": "
			require.True(t, strings.HasPrefix(err.Error(), prefix), err.Error())
			message := strings.TrimPrefix(err.Error(), prefix)
			assert.Contains(t, message, "args."+tc.arg)

			values, err := json.Marshal(tc.args)
			require.NoError(t, err)
			body, err := json.Marshal(map[string]any{"feature": tc.feature, "args": json.RawMessage(values)})
			require.NoError(t, err)
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL()+"/v3/generations", bytes.NewReader(body))
			require.NoError(t, err)
			req.Header.Set("Authorization", srv.APIKey())
			req.Header.Set("Content-Type", "application/json")
			resp, err := raw.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			var answer struct {
				Error struct{ Code, Message string }
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&answer))
			require.Equal(t, http.StatusBadRequest, resp.StatusCode, answer.Error.Message)
			assert.Equal(t, "invalid_argument", answer.Error.Code)
			assert.Equal(t, answer.Error.Message, message, "the client's message is the service's")
			covered[feature.Canonical(tc.feature)+" "+tc.arg] = true
		})
	}
	for _, f := range feature.All {
		for _, a := range f.Args {
			assert.True(t, covered[f.Name+" "+a.Name], "no case for %s %s", f.Name, a.Name)
		}
	}
	assert.Zero(t, requests.Load(), "nothing reached the transport")
	assert.Equal(t, clienttest.Balance, srv.Balance(), "nothing charged")
}

// What needs the service's state is left to it: a file that does not exist,
// a feature this client does not know, the likeness permission.
func TestServiceJudgesWhatNeedsItsState(t *testing.T) {
	_, c, ctx := setup(t)
	for name, tc := range map[string]struct {
		args   client.Args
		status int
		is     error
	}{
		"file not found":     {client.ProductShotArgs{Image: "file_missing", Prompt: "p"}, http.StatusBadRequest, client.ErrInvalidArgument},
		"unknown voice":      {client.VoiceoverArgs{VoiceID: "no-such-voice", Script: "hi"}, http.StatusBadRequest, client.ErrInvalidArgument},
		"unknown feature":    {client.RawArgs{FeatureName: "video/hologram", Values: map[string]any{"prompt": "p"}}, http.StatusBadRequest, client.ErrInvalidArgument},
		"permission missing": {client.AvatarArgs{VoiceID: "ava-warm-narrator", Script: "hi"}, http.StatusForbidden, client.ErrPermissionRequired},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.CreateGeneration(ctx, tc.args)
			require.ErrorIs(t, err, tc.is)
			var apiErr *client.APIError
			require.ErrorAs(t, err, &apiErr, "answered by the service")
			assert.Equal(t, tc.status, apiErr.StatusCode)
		})
	}
}
