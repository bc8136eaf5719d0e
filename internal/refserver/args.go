package refserver

import (
	"encoding/json"
	"maps"
	"math"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// argType is what an argument must hold.
type argType int

const (
	argText  argType = iota // a string of min..max characters, some visible
	argBool                 // a JSON boolean
	argInt                  // a JSON integer in min..max
	argEnum                 // one of enum
	argImage                // the id of a live image file of the project
	argVoice                // a voice id or catalog slug usable for speech
	argColor                // a CSS hex colour
)

// argRule validates one argument.
type argRule struct {
	typ      argType
	required bool
	enum     []string
	min, max int
}

// Bounds DESIGN.md and the contract fix.
const (
	maxPrompt       = 10000
	maxAvatarScript = 5000
	maxVoiceScript  = 20000
	minDuration     = 3
	maxDuration     = 10
	defaultDuration = 5
)

var (
	aspectAll    = []string{"1:1", "16:9", "9:16", "4:3", "3:4"}
	aspectReveal = []string{"16:9", "9:16"}
	resolutions  = []string{"720p", "1080p"}
	colorPattern = regexp.MustCompile(`^#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`)

	rulePrompt     = argRule{typ: argText, required: true, min: 1, max: maxPrompt}
	ruleOptPrompt  = argRule{typ: argText, min: 1, max: maxPrompt}
	ruleImage      = argRule{typ: argImage, required: true}
	ruleOptImage   = argRule{typ: argImage}
	ruleAspect     = argRule{typ: argEnum, enum: aspectAll}
	ruleFlag       = argRule{typ: argBool}
	ruleResolution = argRule{typ: argEnum, enum: resolutions}
	ruleDuration   = argRule{typ: argInt, min: minDuration, max: maxDuration}
	ruleVoice      = argRule{typ: argVoice, required: true}
)

// featureArgs lists every argument each feature takes (DESIGN.md). Names
// not listed are refused, so a typo such as aspect_ratio is never silently
// ignored.
var featureArgs = map[string]map[string]argRule{
	"image/generation":        {"prompt": rulePrompt, "aspectRatio": ruleAspect, "fineDetails": ruleFlag, "image": ruleOptImage},
	"image/self-portrait":     {"image": ruleImage, "prompt": rulePrompt, "aspectRatio": ruleAspect, "permissionConfirmed": ruleFlag},
	"image/product-shot":      {"image": ruleImage, "prompt": rulePrompt, "aspectRatio": ruleAspect, "fineDetails": ruleFlag},
	"image/ad":                {"image": ruleImage, "prompt": rulePrompt, "aspectRatio": ruleAspect, "fineDetails": ruleFlag},
	"image/youtube-thumbnail": {"prompt": rulePrompt, "image": ruleOptImage, "aspectRatio": ruleAspect, "fineDetails": ruleFlag},
	"video/logo-reveal": {
		"image": ruleImage, "prompt": rulePrompt,
		"mode":          {typ: argEnum, enum: []string{"intro", "outro"}},
		"aspectRatio":   {typ: argEnum, enum: aspectReveal},
		"background":    {typ: argColor},
		"generateAudio": ruleFlag,
		"duration":      ruleDuration,
		"resolution":    ruleResolution,
	},
	"video/object-reveal": {"image": ruleImage, "prompt": rulePrompt, "aspectRatio": ruleAspect, "duration": ruleDuration, "resolution": ruleResolution},
	// Any feature accepts a prompt taken from a template (the interface
	// document), so the speech features take an optional one too.
	"video/avatar": {
		"voiceId": ruleVoice, "script": {typ: argText, required: true, min: 1, max: maxAvatarScript},
		"image": ruleOptImage, "aspectRatio": ruleAspect, "resolution": ruleResolution, "permissionConfirmed": ruleFlag,
		"prompt": ruleOptPrompt,
	},
	"audio/voiceover": {"voiceId": ruleVoice, "script": {typ: argText, required: true, min: 1, max: maxVoiceScript}, "prompt": ruleOptPrompt},
}

// likeness lists the features that produce a person's likeness and need
// args.permissionConfirmed true.
var likeness = map[string]bool{"image/self-portrait": true, "video/avatar": true}

// validateArgs checks args against the feature's rules, file ids and voice
// ids included. The caller holds s.mu.
func (s *Server) validateArgs(p *project, canonical string, args map[string]any, now time.Time) *apiError {
	rules := featureArgs[canonical]
	// Sorted, so that the first problem reported is the same on every call.
	ruleNames := slices.Sorted(maps.Keys(rules))
	for _, name := range slices.Sorted(maps.Keys(args)) {
		if _, ok := rules[name]; !ok {
			return invalidf("args.%s is not an argument of %s (arguments: %s)", name, canonical, strings.Join(ruleNames, ", "))
		}
	}
	for _, name := range ruleNames {
		v, ok := args[name]
		rule := rules[name]
		if !ok || v == nil {
			if rule.required {
				return invalidf("args.%s is required", name)
			}
			if v == nil && ok {
				return invalidf("args.%s must not be null", name)
			}
			continue
		}
		if err := s.checkArg(p, name, rule, v, now); err != nil {
			return err
		}
	}
	return nil
}

// checkArg validates one present argument.
func (s *Server) checkArg(p *project, name string, rule argRule, v any, now time.Time) *apiError {
	switch rule.typ {
	case argText:
		str, ok := v.(string)
		n := utf8.RuneCountInString(str)
		if !ok || n < rule.min || n > rule.max {
			return invalidf("args.%s must be a string of %d to %d characters", name, rule.min, rule.max)
		}
		if !visible(str) {
			return invalidf("args.%s has no visible character: it is all control, space or invisible format characters", name)
		}
	case argBool:
		if _, ok := v.(bool); !ok {
			return invalidf("args.%s must be a boolean", name)
		}
	case argInt:
		n, ok := asInt(v)
		if !ok || n < rule.min || n > rule.max {
			return invalidf("args.%s must be an integer from %d to %d", name, rule.min, rule.max)
		}
	case argEnum:
		str, ok := v.(string)
		if !ok || !slices.Contains(rule.enum, str) {
			return invalidf("args.%s must be one of %s", name, strings.Join(rule.enum, ", "))
		}
	case argColor:
		str, ok := v.(string)
		if !ok || !colorPattern.MatchString(str) {
			return invalidf("args.%s must be a CSS hex colour such as #101820", name)
		}
	case argImage:
		id, ok := v.(string)
		if !ok || id == "" {
			return invalidf("args.%s must be a file id (a string from the upload endpoints)", name)
		}
		f, ok := s.liveFile(p, id, now)
		if !ok {
			return invalidf("args.%s: file %q not found (upload it first; files expire 24 hours after upload)", name, id)
		}
		if f.kind != media.Image || !f.decodes {
			return invalidf("args.%s: file %q is not an image that can be decoded (it holds %s)", name, id, f.mediaType)
		}
		if f.invalid != "" {
			return invalidf("args.%s: file %q is not a whole, valid image: %s", name, id, f.invalid)
		}
		if f.invalid != "" {
			return invalidf("args.%s: file %q is not a whole, valid image: %s", name, id, f.invalid)
		}
	case argVoice:
		id, ok := v.(string)
		if !ok || id == "" {
			return invalidf("args.%s must be a voice id or slug", name)
		}
		if err := s.usableVoice(p, id); err != nil {
			return invalidf("args.%s: %s", name, err.Error())
		}
	}
	return nil
}

// visible reports whether s has a character that shows: one that is not a
// control, a space, a format character (zero-width spaces and joiners,
// bidirectional marks, soft hyphens, tags) or another code point Unicode
// has renderers show as nothing (Hangul fillers, variation selectors, the
// combining grapheme joiner).
func visible(s string) bool {
	for _, r := range s {
		if !unicode.IsControl(r) && !unicode.IsSpace(r) &&
			!unicode.In(r, unicode.Cf, unicode.Variation_Selector, unicode.Other_Default_Ignorable_Code_Point) {
			return true
		}
	}
	return false
}

// asInt reads an integral JSON number; fractions and non-numbers fail.
func asInt(v any) (int, bool) {
	var f float64
	switch n := v.(type) {
	case float64:
		f = n
	case int:
		return n, true
	case int64:
		f = float64(n)
	case json.Number:
		i, err := n.Int64()
		if err != nil {
			return 0, false
		}
		f = float64(i)
	default:
		return 0, false
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<31 {
		return 0, false
	}
	return int(f), true
}

// intArg reads an integer argument already validated, or def when absent.
func intArg(args map[string]any, name string, def int) int {
	if n, ok := asInt(args[name]); ok {
		return n
	}
	return def
}

// stringArg reads a string argument already validated, or "".
func stringArg(args map[string]any, name string) string {
	s, _ := args[name].(string)
	return s
}

// stringArgOr reads a string argument, or def when absent.
func stringArgOr(args map[string]any, name, def string) string {
	if s, ok := args[name].(string); ok {
		return s
	}
	return def
}

func runeCount(s string) int { return utf8.RuneCountInString(s) }

// checkPermission answers 403 when a likeness feature lacks
// args.permissionConfirmed true.
func checkPermission(canonical string, args map[string]any) *apiError {
	if !likeness[canonical] {
		return nil
	}
	if ok, _ := args["permissionConfirmed"].(bool); ok {
		return nil
	}
	return newError(http.StatusForbidden, api.ErrorCodePermissionRequired,
		"%s produces a person's likeness: set args.permissionConfirmed to true to confirm you have the person's permission", canonical)
}

// checkWebhookURL accepts https URLs whose host can be publicly reachable,
// and, when allowed, http or https URLs on a loopback host for local tests.
// Hosts that can never be reached from the service (loopback, private,
// link-local, unspecified or multicast addresses, localhost) are refused,
// as the interface document asks for a publicly reachable URL.
func (s *Server) checkWebhookURL(raw string) *apiError {
	if raw == "" {
		return nil // absent: an empty string asks for no webhook
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return invalidf("webhookUrl must be an absolute https URL")
	}
	host := u.Hostname()
	local := s.allowHTTPWebhooks && isLoopback(host)
	switch {
	case u.Scheme != "https" && !(u.Scheme == "http" && local):
		if s.allowHTTPWebhooks {
			return invalidf("webhookUrl must be an https URL, or an http URL on a loopback host (this server allows those for local tests)")
		}
		return invalidf("webhookUrl must be an https URL")
	case !local && !publicHost(host):
		return invalidf("webhookUrl must be publicly reachable; %q is a local or private address", host)
	}
	return nil
}

// publicHost reports whether host may be reachable from the internet: any
// DNS name except localhost, and IP addresses outside the loopback,
// private, link-local, unspecified and multicast ranges.
func publicHost(host string) bool {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return false
	}
	ip := net.ParseIP(h)
	if ip == nil {
		return true
	}
	return !(ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified())
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
