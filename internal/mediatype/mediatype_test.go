package mediatype_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mediagen/mediagen-go/internal/mediatype"
	"github.com/mediagen/mediagen-go/openapi"
)

// The contract lists the accepted types on the upload-url request; this
// package is what code checks against. They must agree.
func TestContractListsTheSameTypes(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Accepted []string `json:"x-accepted-media-types"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(openapi.Spec(), &doc))
	listed := doc.Components.Schemas["CreateUploadURLRequest"].Properties["contentType"].Accepted
	require.NotEmpty(t, listed, "x-accepted-media-types on CreateUploadURLRequest.contentType")
	assert.ElementsMatch(t, mediatype.Accepted(), listed)
}

func TestCanonical(t *testing.T) {
	for in, want := range map[string]string{
		"image/png":                 "image/png",
		"IMAGE/PNG":                 "image/png",
		"text/plain; charset=utf-8": "text/plain",
		"audio/x-wav":               "audio/wav",
		"application/ogg":           "audio/ogg",
		"audio/mp3":                 "audio/mpeg",
	} {
		got, _, ok := mediatype.Canonical(in)
		assert.True(t, ok, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "image/jpg", "application/octet-stream", "not a type;;", "video/x-msvideo"} {
		_, _, ok := mediatype.Canonical(in)
		assert.False(t, ok, in)
	}
	for alias, canonical := range mediatype.AliasesForTest {
		_, _, ok := mediatype.Canonical(canonical)
		assert.True(t, ok, "alias %s points at an accepted type", alias)
	}
}
