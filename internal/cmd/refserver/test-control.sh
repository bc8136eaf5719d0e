#!/usr/bin/env bash
# Drives the reference server's test-control API with curl, as a test in any
# language would: start the command, read the MEDIAGEN_* lines it prints,
# then show that
#   - a delivery carries two signature entries after a webhook secret rotation,
#   - a retired catalog voice answers 404,
#   - an upload URL is refused (403) once 15 minutes passed,
#   - a generation answers 404 once the clock passed 24 hours.
#
# Run from anywhere inside the repository:
#   internal/cmd/refserver/test-control.sh
# or against an installed command:
#   REFSERVER=$(go env GOPATH)/bin/refserver internal/cmd/refserver/test-control.sh
# Needs curl; the webhook step needs python3 (a one-shot receiver) and is
# skipped without it.
set -euo pipefail

tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

if [ -z "${REFSERVER:-}" ]; then
  (cd "$(dirname "$0")" && go build -o "$tmp/refserver" .)
  REFSERVER=$tmp/refserver
fi

# Start the command on a free port; it prints four MEDIAGEN_* lines first.
"$REFSERVER" -addr 127.0.0.1:0 -api-key test-key -render-scale 0.01 \
  -allow-http-webhooks -test-control >"$tmp/vars" &
pids+=($!)
for _ in $(seq 100); do
  [ "$(wc -l <"$tmp/vars")" -ge 4 ] && break
  sleep 0.1
done
# shellcheck disable=SC1091
. "$tmp/vars" || fail "no MEDIAGEN_* lines"
BASE=$MEDIAGEN_BASE_URL KEY=$MEDIAGEN_API_KEY TC=$MEDIAGEN_TEST_CONTROL_URL
[ -n "${TC:-}" ] || fail "MEDIAGEN_TEST_CONTROL_URL missing: is -test-control on?"
echo "server at $BASE"

# api METHOD URL [JSON]: prints the body, then the status on its own line.
api() {
  local args=(-sS -X "$1" -H "Authorization: $KEY" -w '\n%{http_code}')
  [ $# -ge 3 ] && args+=(-H 'Content-Type: application/json' -d "$3")
  curl "${args[@]}" "$2"
}
status() { tail -n1; }
# field NAME: the first string value of NAME in the JSON on stdin.
field() { grep -o "\"$1\":\"[^\"]*\"" | head -n1 | cut -d'"' -f4 | sed 's/\\u0026/\&/g'; }

# 1. Rotation: deliveries carry the new and the previous secret's entries.
rotated=$(api POST "$TC/webhook-secret/rotate")
[ "$(status <<<"$rotated")" = 200 ] || fail "rotate: $rotated"
ok "webhook secret rotated; new secret $(field webhookSecret <<<"$rotated")"
hook=""
if command -v python3 >/dev/null; then
  python3 -u - >"$tmp/hook" <<'PY' &
import http.server
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.send_response(200)
        self.end_headers()
        print(self.headers.get("X-Service-Signature"), flush=True)
    def log_message(self, *args):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.handle_request()
PY
  pids+=($!)
  for _ in $(seq 50); do [ -s "$tmp/hook" ] && break; sleep 0.1; done
  hook="http://127.0.0.1:$(head -n1 "$tmp/hook")/hook"
fi
created=$(api POST "$BASE/v3/generations" \
  "{\"feature\":\"image/generation\",\"args\":{\"prompt\":\"a lighthouse\"}${hook:+,\"webhookUrl\":\"$hook\"}}")
[ "$(status <<<"$created")" = 200 ] || fail "create: $created"
gen=$(field id <<<"$created")
if [ -n "$hook" ]; then
  for _ in $(seq 100); do [ "$(wc -l <"$tmp/hook")" -ge 2 ] && break; sleep 0.1; done
  sig=$(sed -n 2p "$tmp/hook")
  n=$(wc -w <<<"$sig")
  [ "$n" -eq 2 ] || fail "expected two signature entries, got: $sig"
  ok "delivery after the rotation carries $n signature entries"
else
  echo "skipped: the webhook check needs python3"
fi

# 2. A retired catalog voice answers 404.
voice=$(api GET "$BASE/v3/voices" | field id)
[ "$(api POST "$TC/voices/$voice/retire" | status)" = 200 ] || fail "retire $voice"
got=$(api GET "$BASE/v3/voices/$voice" | status)
[ "$got" = 404 ] || fail "retired voice answered $got"
ok "retired voice $voice answers 404"

# 3. An upload URL is refused once 15 minutes passed.
url=$(api POST "$BASE/v3/files/upload-url" '{"bytes":5,"contentType":"text/plain"}' | field uploadUrl)
[ "$(api POST "$TC/clock/advance" '{"duration":"15m1s"}' | status)" = 200 ] || fail "advance"
got=$(curl -sS -o /dev/null -w '%{http_code}' -X PUT -H 'Content-Type: text/plain' --data-binary hello "$url")
[ "$got" = 403 ] || fail "expired upload URL answered $got"
ok "upload URL refused with 403 after 15 minutes"

# 4. A generation answers 404 once the clock passed 24 hours.
[ "$(api POST "$TC/clock/advance" '{"seconds":86400}' | status)" = 200 ] || fail "advance"
got=$(api GET "$BASE/v3/generations/$gen" | status)
[ "$got" = 404 ] || fail "expired generation answered $got"
ok "generation $gen answers 404 after 24 hours"
echo "server time now: $(api GET "$TC/clock" | field now)"
