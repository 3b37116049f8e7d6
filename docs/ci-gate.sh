#!/usr/bin/env bash
# retroprof CI gate for a Mega Drive (SGDK) project, for any CI system.
#
#   docs/ci-gate.sh ROM OUTDIR [BASELINE.json] [-- EXTRA retroprof profile OPTIONS]
#
# Profiles ROM (symbols: symbol.txt / rom.out found next to it) and writes
# OUTDIR/report.json (keep it: it is the next build's baseline) and
# OUTDIR/report.html. With BASELINE.json (the main branch's report.json),
# also compares with it: prints the diff, writes OUTDIR/diff.json and
# OUTDIR/diff.html, and fails (exit 3) when the build got slower:
#   mean or p99 load up by more than $RETROPROF_MAX_LOAD_REGRESSION points (default 1),
#   a function's self cycles up by more than $RETROPROF_MAX_FUNCTION_REGRESSION % (default 5)
#     and by more than 0.1 % of all cycles,
#   more dropped frames than the baseline.
# Exit codes: 0 pass, 3 a gate tripped, 2 bad input, 1 other errors.
#
# Environment: RETROPROF (the retroprof binary, default: retroprof on PATH),
# RETROPROF_FRAMES (default 1800), RETROPROF_INPUT (a pad script such as
# "60-600:R", default none).
set -euo pipefail

usage() { sed -n '2,19p' "$0" >&2; exit 2; }
(($# >= 2)) || usage
ROM=$1 OUT=$2
shift 2
BASELINE=""
if (($#)) && [ "$1" != "--" ]; then BASELINE=$1; shift; fi
if (($#)) && [ "$1" = "--" ]; then shift; fi

RETROPROF=${RETROPROF:-retroprof}
FRAMES=${RETROPROF_FRAMES:-1800}
MAX_LOAD=${RETROPROF_MAX_LOAD_REGRESSION:-1}
MAX_FUNC=${RETROPROF_MAX_FUNCTION_REGRESSION:-5}

[ -f "$ROM" ] || { echo "ci-gate: $ROM: no such ROM" >&2; exit 2; }
command -v "$RETROPROF" >/dev/null 2>&1 ||
    { echo "ci-gate: $RETROPROF not found (cargo install retroprof, or set RETROPROF)" >&2; exit 2; }
mkdir -p "$OUT"

args=(profile "$ROM" --frames "$FRAMES" --json "$OUT/report.json" --html "$OUT/report.html")
if [ -n "${RETROPROF_INPUT:-}" ]; then args+=(--input "$RETROPROF_INPUT"); fi
if [ -n "$BASELINE" ]; then
    [ -f "$BASELINE" ] || { echo "ci-gate: baseline $BASELINE: no such file" >&2; exit 2; }
    args+=(--baseline "$BASELINE" --diff-json "$OUT/diff.json" --diff-html "$OUT/diff.html"
           --fail-load-regression "$MAX_LOAD" --fail-function-regression "$MAX_FUNC"
           --fail-new-drops)
fi
args+=("$@")

set +e
"$RETROPROF" "${args[@]}"
status=$?
set -e
case $status in
    0) echo "ci-gate: pass" ;;
    3) echo "ci-gate: FAILED: this build is slower than the baseline (see above, $OUT/diff.html)" >&2 ;;
    *) echo "ci-gate: retroprof exited with $status" >&2 ;;
esac
exit $status
