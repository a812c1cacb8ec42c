#!/usr/bin/env bash
# Follow a tabwire session's page events with curl, one compact JSON line per event (what
# `tabwire wait` does over the session socket; prefer that where the tabwire binary is at hand).
#
#   scripts/wait-for-state.sh [SESSION_ID]      # default: $TABWIRE_SESSION_ID, else the only session
#
# Needs curl and jq. The session's record (<runtime>/sessions/<id>.json, readable only by you)
# holds the port and the bearer token of its GET /wait.
set -euo pipefail

runtime="${TABWIRE_RUNTIME_DIR:-${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/tabwire}}"
runtime="${runtime:-/tmp/tabwire-$(id -u)}"
id="${1:-${TABWIRE_SESSION_ID:-}}"
if [[ -z "$id" ]]; then
  records=("$runtime"/sessions/*.json)
  if [[ ! -e "${records[0]}" ]]; then
    echo "no tabwire session is running in $runtime" >&2; exit 1
  fi
  if (( ${#records[@]} > 1 )); then
    echo "several sessions are running; pass one id: $(basename -s .json "${records[@]}" | tr '\n' ' ')" >&2; exit 1
  fi
  record="${records[0]}"
else
  record="$runtime/sessions/$id.json"
fi
[[ -r "$record" ]] || { echo "no session record $record" >&2; exit 1; }
port="$(jq -r .http_port "$record")"
token="$(jq -r .token "$record")"

while true; do
  body="$(mktemp)"
  # The header comes from a file descriptor, not the command line that `ps` shows others.
  status="$(curl -sS -o "$body" -w '%{http_code}' -H @<(printf 'Authorization: Bearer %s\n' "$token") \
    "http://127.0.0.1:$port/wait?timeout=${TIMEOUT:-30}")" || { rm -f "$body"; echo "the session is gone" >&2; exit 1; }
  case "$status" in
    200) jq -c '.[]' "$body" ;;
    204) ;;
    *) echo "GET /wait answered $status: $(cat "$body")" >&2; rm -f "$body"; exit 1 ;;
  esac
  rm -f "$body"
done
