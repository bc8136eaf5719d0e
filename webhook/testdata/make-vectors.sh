#!/bin/sh
# Regenerates vectors.tsv with openssl, independently of the Go code under test.
# Columns (tab-separated): name, secret, timestamp, payload file, sha256 hex.
set -eu
cd "$(dirname "$0")"
sign() { # secret timestamp file
	{ printf '%s.' "$2"; cat "$3"; } | openssl dgst -sha256 -hmac "$1" | awk '{print $NF}'
}
{
	for row in \
		"generation-new	whsec_new_7f3a9c	1763719200	generation_done.json" \
		"generation-old	whsec_old_91c2e4	1763719200	generation_done.json" \
		"voice	whsec_new_7f3a9c	1763719260	voice_done.json" \
		"unicode-secret	sécret with spaces & ü	1763719300	unicode.txt" \
		"empty-body	whsec_new_7f3a9c	1763719200	empty.txt"
	do
		name=$(printf '%s' "$row" | cut -f1)
		secret=$(printf '%s' "$row" | cut -f2)
		ts=$(printf '%s' "$row" | cut -f3)
		file=$(printf '%s' "$row" | cut -f4)
		printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$secret" "$ts" "$file" "$(sign "$secret" "$ts" "$file")"
	done
} > vectors.tsv
