package refserver

import (
	"crypto/rand"
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"
)

// Project is what a caller needs to talk to the server as one project: its
// API key and the secret its webhook deliveries are signed with.
type Project struct {
	APIKey        string
	WebhookSecret string
}

// project is the server's record of one tenant. Money is held in units of
// 1/10,000 USD, the precision of every charge, so charges and refunds add up
// exactly.
type project struct {
	id      string
	key     string
	secret  string
	balance int64

	// After a rotation the previous secret still signs deliveries until
	// previousUntil, so receivers can switch without losing events.
	previous      string
	previousUntil time.Time

	// The project's rows in list order, newest first, kept by the server
	// under its lock so that pages are read without a scan or a sort.
	gens      rowIndex[*generation]             // visible generations
	byFeature map[string]*rowIndex[*generation] // the same, by canonical feature
	clones    rowIndex[*clone]
}

// public is what [Server.Project] tells a caller about p.
func (p *project) public() Project {
	return Project{APIKey: p.key, WebhookSecret: p.secret}
}

// rotationOverlap is how long a rotated-out webhook secret keeps signing.
const rotationOverlap = 24 * time.Hour

// unitsPerUSD is the resolution of balances and charges.
const unitsPerUSD = 10000

// toUnits converts USD to balance units, rounding to the nearest unit.
func toUnits(usd float64) int64 {
	return int64(math.Round(usd * unitsPerUSD))
}

// fromUnits converts balance units to USD.
func fromUnits(u int64) float64 {
	return float64(u) / unitsPerUSD
}

// formatUnits renders balance units as a USD amount for messages: cents
// always (0.20, 1.00), and the further digits a unit may have (0.0375).
func formatUnits(u int64) string {
	s := strconv.FormatFloat(fromUnits(u), 'f', -1, 64)
	whole, frac, _ := strings.Cut(s, ".")
	for len(frac) < 2 {
		frac += "0"
	}
	return whole + "." + frac
}

// randomHex returns n random bytes, hex-encoded.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

// AddProject creates a project with the given API key and balance (USD) and
// a fresh random webhook secret. When the key already exists, its balance is
// set and its secret kept.
func (s *Server) AddProject(apiKey string, balance float64) Project {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.projects[apiKey]
	if !ok {
		p = &project{id: "proj_" + randomHex(8), key: apiKey, secret: newWebhookSecret()}
		s.projects[apiKey] = p
	}
	p.balance = toUnits(balance)
	return p.public()
}

// Project returns the project of apiKey, if there is one.
func (s *Server) Project(apiKey string) (Project, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.projects[apiKey]
	if !ok {
		return Project{}, false
	}
	return p.public(), true
}

// Balance returns the balance of apiKey's project in USD, after settling
// every transition due (so refunds already happened are counted); 0 for an
// unknown key.
func (s *Server) Balance(apiKey string) float64 {
	s.settle() // not Settle: the event sink may call Balance
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.projects[apiKey]; ok {
		return fromUnits(p.balance)
	}
	return 0
}

// SetBalance sets the balance of apiKey's project in USD; unknown keys are
// ignored.
func (s *Server) SetBalance(apiKey string, balance float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.projects[apiKey]; ok {
		p.balance = toUnits(balance)
	}
}

// newWebhookSecret returns a fresh random webhook signing secret.
func newWebhookSecret() string { return "whsec_" + randomHex(24) }

// RotateWebhookSecret gives apiKey's project a new webhook secret at once.
// For 24 hours the previous one keeps signing too, so [Server.WebhookSecrets]
// returns both and each delivery carries two signature entries.
func (s *Server) RotateWebhookSecret(apiKey string) (Project, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.projects[apiKey]
	if !ok {
		return Project{}, false
	}
	p.previous, p.previousUntil = p.secret, s.clock.Now().Add(rotationOverlap)
	p.secret = newWebhookSecret()
	return p.public(), true
}

// WebhookSecrets returns the secrets a delivery for apiKey's project is
// signed with: the current one first, then, within 24 hours of a rotation,
// the previous one. It is nil for an unknown key.
func (s *Server) WebhookSecrets(apiKey string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.projects[apiKey]
	if !ok {
		return nil
	}
	out := []string{p.secret}
	if p.previous != "" && s.clock.Now().Before(p.previousUntil) {
		out = append(out, p.previous)
	}
	return out
}
