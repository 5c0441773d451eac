#!/usr/bin/env bash
# The GitHub Action's step (action.yml): replay CTXSIM_TRACES under
# CTXSIM_POLICY, check the results against CTXSIM_BASELINE, append the
# Markdown summary to $GITHUB_STEP_SUMMARY and exit as ctxsim check does
# (0 ok, 1 regression, 2 bad input). Run by cmd/ctxsim's TestActionScript.
set -euo pipefail

: "${CTXSIM_TRACES:?set CTXSIM_TRACES to a capture file or trace directory}"
: "${CTXSIM_BASELINE:?set CTXSIM_BASELINE to the committed baseline}"
out="${CTXSIM_OUT:-ctxsim-out}"
ctxsim="${CTXSIM:-ctxsim}"
mkdir -p "$out"

args=(compare --trace "$CTXSIM_TRACES" --out "$out")
for p in ${CTXSIM_POLICY:-recorded}; do args+=(--policy "$p"); done
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
