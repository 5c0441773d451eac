#!/usr/bin/env bash
# The GitHub Action's step (action.yml): replay CTXSIM_TRACES under
# CTXSIM_POLICY, check the results against CTXSIM_BASELINE, append the
# Markdown summary to $GITHUB_STEP_SUMMARY and exit as ctxsim check does
# (0 ok, 1 regression, 2 bad input). Without CTXSIM_POLICY a capture
# replays as sent (its own cache markers: the harness's baseline) and logs
# under recorded. Run by cmd/ctxsim's TestActionScript tests.
set -euo pipefail

: "${CTXSIM_TRACES:?set CTXSIM_TRACES to a capture file or trace directory}"
: "${CTXSIM_BASELINE:?set CTXSIM_BASELINE to the committed baseline}"
out="${CTXSIM_OUT:-ctxsim-out}"
ctxsim="${CTXSIM:-ctxsim}"
mkdir -p "$out"

# is_capture: the input reads as captured traffic, all of it (ctxsim's own
# reader decides: import capture writes its sessions and warns about any
# file that is not a capture).
is_capture() {
  local tmp
  tmp="$(mktemp -d)"
  local ok=1
  if "$ctxsim" import capture "$CTXSIM_TRACES" -o "$tmp/t" --json >"$tmp/import.json" 2>/dev/null &&
    ! grep -q 'not a capture' "$tmp/import.json" && compgen -G "$tmp/t/*.jsonl" >/dev/null; then
    ok=0
  fi
  rm -rf "$tmp"
  return "$ok"
}

policy="${CTXSIM_POLICY:-}"
if [ -z "$policy" ]; then
  policy=recorded
  case "${CTXSIM_FROM:-}" in
  capture) policy=as-sent ;;
  "") if is_capture; then policy=as-sent; fi ;;
  esac
fi

args=(compare --trace "$CTXSIM_TRACES" --out "$out")
for p in $policy; do args+=(--policy "$p"); done
if [ -n "${CTXSIM_FROM:-}" ]; then args+=(--from "$CTXSIM_FROM"); fi
"$ctxsim" "${args[@]}"

check=(check --baseline "$CTXSIM_BASELINE" --results "$out/summary.json" --markdown "$out/check.md")
for t in ${CTXSIM_TOLERANCE:-}; do check+=(--tolerance "$t"); done
status=0
"$ctxsim" "${check[@]}" || status=$?

if [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/check.md" ]; then
  cat "$out/check.md" >> "$GITHUB_STEP_SUMMARY"
fi
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "summary=$out/check.md" >> "$GITHUB_OUTPUT"
fi
exit "$status"
