#!/usr/bin/env sh
# One round trip through a running service: publish docs/examples/signal-roundtrip.json, start an instance, signal it,
# and wait (a bounded long-poll) until it is Completed with the signal's payload as its result. Exits 0 only then.
# CI runs it after `docker compose up` (.github/workflows/ci.yml); an operator can run it against any deployment:
#   compose/smoke.sh http://localhost:8080                 # the key from compose/secrets/api-key (../init-secrets.sh)
#   compose/smoke.sh https://workflow.example.com KEYFILE  # the key in another file
set -eu
base="${1:?usage: $0 BASE_URL [API_KEY_FILE]}"
here="$(cd "$(dirname "$0")" && pwd)"
key="$(cat "${2:-$here/secrets/api-key}")"
definition="$here/../docs/examples/signal-roundtrip.json"

# Ready within 60 s: a fresh container migrates its store first.
tries=0
until curl -fs -o /dev/null "$base/health/ready"; do
  tries=$((tries + 1))
  if [ "$tries" -ge 60 ]; then echo "smoke: $base/health/ready did not answer 200 within 60 s" >&2; exit 1; fi
  sleep 1
done

call() { curl -sS -H "X-Api-Key: $key" -H 'Content-Type: application/json' "$@"; }

# Publishing the same definition again is answered as a conflict or a new version: either is fine here.
status=$(call -o /dev/null -w '%{http_code}' -X POST "$base/definitions" --data @"$definition")
case "$status" in 2??|409) ;; *) echo "smoke: publishing the definition answered $status" >&2; exit 1 ;; esac

started=$(call -f -X POST "$base/instances" -d '{"definition":"signal-roundtrip","input":{"smoke":true}}')
id=$(printf %s "$started" | sed -nE 's/.*"id":"([^"]+)".*/\1/p')
if [ -z "$id" ]; then echo "smoke: no instance id in $started" >&2; exit 1; fi

call -f -o /dev/null -X POST "$base/instances/$id/signals" -d '{"name":"go","payload":{"value":7}}'

final=$(call -f "$base/instances/$id?waitFor=Completed&timeout=30")
case "$final" in
  *'"status":"Completed"'*'"value":7'* | *'"value":7'*'"status":"Completed"'*) echo "smoke: instance $id completed" ;;
  *) echo "smoke: instance $id did not complete: $final" >&2; exit 1 ;;
esac
