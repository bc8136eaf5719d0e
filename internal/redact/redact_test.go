package redact

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

const key = "mg_live/abc+def=123"

// jsonEscaped writes every character of s as \uXXXX, as a hostile service
// may.
func jsonEscaped(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(`\u`)
		const hex = "0123456789abcdef"
		b.WriteByte(hex[r>>12&0xf])
		b.WriteByte(hex[r>>8&0xf])
		b.WriteByte(hex[r>>4&0xf])
		b.WriteByte(hex[r&0xf])
	}
	return b.String()
}

func TestBytes(t *testing.T) {
	marshalled, _ := json.Marshal(key)
	for name, body := range map[string]string{
		"as is":              `{"error":{"message":"bad key ` + key + `"}}`,
		"slash escaped":      `{"error":{"message":"bad key ` + strings.ReplaceAll(key, "/", `\/`) + `"}}`,
		"every char escaped": `{"error":{"message":"` + jsonEscaped(key) + `"}}`,
		"json.Marshal":       `{"echo":` + string(marshalled) + `}`,
		"query escaped":      `next=` + url.QueryEscape(key),
		"path escaped":       `/v3/` + url.PathEscape(key),
		"url in json":        `{"u":"` + strings.ReplaceAll(url.QueryEscape(key), "%", `\u0025`) + `"}`,
	} {
		t.Run(name, func(t *testing.T) {
			out := Bytes([]byte(body), key)
			assert.False(t, Carries(out, key), "%s", out)
			assert.NotContains(t, string(out), key)
			assert.False(t, Carries([]byte(String(body, key)), key))
		})
	}
	plain := `{"error":{"code":"not_found","message":"no such generation"}}`
	assert.Equal(t, plain, string(Bytes([]byte(plain), key)), "a body without the key is left alone")
	assert.Equal(t, `{"m":"`+Mask+`"}`, string(Bytes([]byte(`{"m":"`+key+`"}`), key)), "masked in place where it stands as it is")
	assert.Equal(t, "short", String("short", "abc"), "keys under 6 bytes are not masked")
}

func FuzzBytes(f *testing.F) {
	f.Add([]byte(`{"message":"`), []byte(`"}`), uint8(0))
	f.Add([]byte("a=%"), []byte("&b"), uint8(1))
	f.Add([]byte(`\`), []byte(`\u00`), uint8(2))
	f.Fuzz(func(t *testing.T, before, after []byte, how uint8) {
		var enc string
		switch how % 4 {
		case 0:
			enc = key
		case 1:
			enc = jsonEscaped(key)
		case 2:
			enc = url.QueryEscape(key)
		case 3:
			enc = strings.ReplaceAll(key, "/", `\/`)
		}
		body := append(append(append([]byte{}, before...), enc...), after...)
		out := Bytes(body, key)
		if Carries(out, key) {
			t.Fatalf("%q still carries the key", out)
		}
		// Nothing is lost when there was nothing to hide.
		if !Carries(before, key) && !Carries(after, key) && string(Bytes(before, key)) != string(before) {
			t.Fatalf("%q changed without the key", before)
		}
	})
}
