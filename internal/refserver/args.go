package refserver

import (
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mediagen/mediagen-go/internal/api"
	"github.com/mediagen/mediagen-go/internal/feature"
	"github.com/mediagen/mediagen-go/internal/refserver/media"
)

// validateArgs checks args against the feature's schema in the contract
// (feature.Check, which the client runs too, so both give the same
// message), then what needs the server's state: that each file id names a
// live, valid image of the project and each voice id a usable voice. The
// caller holds s.mu.
func (s *Server) validateArgs(p *project, info feature.Info, args map[string]any, now time.Time) *apiError {
	if err := feature.Check(info.Name, args); err != nil {
		return invalidf("%s", err.Error())
	}
	for _, name := range slices.Sorted(maps.Keys(args)) {
		a, _ := info.Arg(name)
		id, _ := args[name].(string)
		switch a.Format {
		case "file-id":
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
		case "voice-id":
			if err := s.usableVoice(p, id); err != nil {
				return invalidf("args.%s: %s", name, err.Error())
			}
		}
	}
	return nil
}

// stringArg reads a validated string argument, else its default, else "".
func stringArg(info feature.Info, args map[string]any, name string) string {
	s, _ := info.Default(args, name).(string)
	return s
}

// intArg reads a validated integer argument, else its default, else 0.
func intArg(info feature.Info, args map[string]any, name string) int {
	n, _ := feature.AsInt(info.Default(args, name))
	return n
}

func runeCount(s string) int { return utf8.RuneCountInString(s) }

// checkPermission answers 403 when a feature that produces a person's
// likeness (one with a permissionConfirmed argument) lacks
// args.permissionConfirmed true.
func checkPermission(info feature.Info, args map[string]any) *apiError {
	if _, likeness := info.Arg("permissionConfirmed"); !likeness {
		return nil
	}
	if ok, _ := args["permissionConfirmed"].(bool); ok {
		return nil
	}
	return newError(http.StatusForbidden, api.ErrorCodePermissionRequired,
		"%s produces a person's likeness: set args.permissionConfirmed to true to confirm you have the person's permission", info.Name)
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
