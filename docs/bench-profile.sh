#!/usr/bin/env bash
# Speed of `retroprof profile` on every shared ROM and our test ROMs.
#
#   docs/bench-profile.sh [options] [BINARY]
#
#   BINARY            the retroprof to measure (default: target/release/retroprof,
#                     build it with `cargo build --release -p retroprof`)
#   --baseline BIN    a second retroprof (e.g. a build of main): both run in
#                     turn, A B A B ..., and each ROM gets the ratio
#                     baseline time / BINARY time pair by pair (the median
#                     of the pairs; > 1 means BINARY is faster)
#   --frames N        frames per run (default 3600, as the reference figures)
#   --runs N          counted runs per binary and ROM (default 5; one more,
#                     first, is a warm-up and not counted)
#   --roms DIR        the shared ROMs (default ../shared/roms next to the
#                     repository)
#
# Each ROM runs as the issue's measurement does: full attribution and
# per-frame records on (`--csv`), the reference input for the shared ROMs
# (../shared/reference/README.md), `--entry interrupted --keep-labels`.
# Printed per ROM: the game's mean load (from the report), frames per second
# of CPU time (user + system, median of the runs: what the process itself
# used, so a busy machine slows it less than wall time) and of wall time,
# and with --baseline the same for the baseline and the paired ratios.
# Ratios measured in one interleaved run are what to compare: absolute
# times on a shared machine move with its load (the `uptime` load average
# is printed first). The fps columns are each binary's own median, the
# ratio columns the median of the pair-by-pair ratios, so on a noisy
# machine B_fps/A_fps and the ratio can differ by a few per cent: the
# ratio is the figure to quote (each pair ran back to back, so a change
# of the machine's speed between pairs cancels in it and not in the
# separate medians). The load is read from A's report.
#
# Needs bash and awk. Not built or run by `cargo test`.
set -euo pipefail
export LC_ALL=C

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$HERE/target/release/retroprof"
BASE=""
FRAMES=3600
RUNS=5
ROMDIR="$HERE/../shared/roms"
INPUT='60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C'

die() { echo "bench-profile: $*" >&2; exit 2; }

while (($#)); do
    case "$1" in
        --baseline) shift; (($#)) || die "--baseline needs a binary"; BASE=$1 ;;
        --frames) shift; [[ ${1:-} =~ ^[1-9][0-9]*$ ]] || die "--frames needs a positive number"; FRAMES=$1 ;;
        --runs) shift; [[ ${1:-} =~ ^[1-9][0-9]*$ ]] || die "--runs needs a positive number"; RUNS=$1 ;;
        --roms) shift; (($#)) || die "--roms needs a folder"; ROMDIR=$1 ;;
        -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
        -*) die "unknown option: $1 (try --help)" ;;
        *) BIN=$1 ;;
    esac
    shift
done
[ -x "$BIN" ] || die "$BIN: not an executable (build: cargo build --release -p retroprof)"
[ -z "$BASE" ] || [ -x "$BASE" ] || die "$BASE: not an executable"
[ -d "$ROMDIR" ] || die "$ROMDIR: no such folder (the shared ROMs; give --roms DIR)"

# name|rom|extra arguments
ROMS=()
for n in vnmd platformer castlecat2; do
    [ -f "$ROMDIR/$n/rom.bin" ] || die "$ROMDIR/$n/rom.bin missing"
    ROMS+=("$n|$ROMDIR/$n/rom.bin|--input $INPUT --entry interrupted --keep-labels")
done
for n in knowncosts heap fullload; do
    [ -f "$HERE/testroms/out/$n/rom.bin" ] || die "testroms/out/$n/rom.bin missing"
    ROMS+=("$n|$HERE/testroms/out/$n/rom.bin|")
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# run BIN ROM ARGS... -> prints "cpu_seconds wall_seconds" (bash's `time`:
# the process's user + system time, and wall time); the report goes to
# $TMP/report.txt.
run() {
    local bin=$1 rom=$2; shift 2
    local TIMEFORMAT='%3U %3S %3R'
    { time "$bin" profile "$rom" --frames "$FRAMES" "$@" --csv "$TMP/frames.csv" \
        >"$TMP/report.txt" 2>"$TMP/err.txt"; } 2>"$TMP/time.txt" ||
        die "$bin failed on $rom: $(head -c 300 "$TMP/err.txt")"
    awk '{ printf "%.4f %.4f\n", $1 + $2, $3 }' "$TMP/time.txt"
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "machine: $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg); frames per run $FRAMES, $RUNS counted runs + 1 warm-up"
echo "A = $BIN"
[ -z "$BASE" ] || echo "B = $BASE (baseline; ratio = B time / A time, median of the pairs)"
if [ -z "$BASE" ]; then
    printf '%-11s %6s %10s %10s\n' rom load fps_cpu fps_wall
else
    printf '%-11s %6s %10s %10s %10s %10s %8s %8s\n' rom load A_fps_cpu A_fps_wall B_fps_cpu B_fps_wall cpu_B/A wall_B/A
fi

for entry in "${ROMS[@]}"; do
    IFS='|' read -r name rom extra <<<"$entry"
    # shellcheck disable=SC2206
    args=($extra)
    : >"$TMP/a"; : >"$TMP/b"; : >"$TMP/r"
    for ((i = 0; i <= RUNS; i++)); do
        # With a baseline the order alternates (A B, then B A, ...), so
        # whatever favours the first or the second run of a pair (caches,
        # clock ramp-up after the previous ROM) falls on both alike.
        if [ -n "$BASE" ] && ((i % 2)); then
            b=$(run "$BASE" "$rom" "${args[@]}")
        fi
        a=$(run "$BIN" "$rom" "${args[@]}")
        load=$(sed -n 's/^load: mean \([0-9.]*\)%.*/\1/p' "$TMP/report.txt")
        if [ -n "$BASE" ] && ! ((i % 2)); then
            b=$(run "$BASE" "$rom" "${args[@]}")
        fi
        ((i == 0)) && continue
        echo "$a" >>"$TMP/a"
        if [ -n "$BASE" ]; then
            echo "$b" >>"$TMP/b"
            paste -d' ' <(echo "$a") <(echo "$b") | awk '{ printf "%.4f %.4f\n", $3 / $1, $4 / $2 }' >>"$TMP/r"
        fi
    done
    fps() { awk -v f="$FRAMES" '{ printf "%.0f\n", f / $1 }'; }
    a_cpu=$(cut -d' ' -f1 "$TMP/a" | median | fps)
    a_wall=$(cut -d' ' -f2 "$TMP/a" | median | fps)
    if [ -z "$BASE" ]; then
        printf '%-11s %5s%% %10s %10s\n' "$name" "${load:-?}" "$a_cpu" "$a_wall"
    else
        b_cpu=$(cut -d' ' -f1 "$TMP/b" | median | fps)
        b_wall=$(cut -d' ' -f2 "$TMP/b" | median | fps)
        r_cpu=$(cut -d' ' -f1 "$TMP/r" | median)
        r_wall=$(cut -d' ' -f2 "$TMP/r" | median)
        printf '%-11s %5s%% %10s %10s %10s %10s %8.3f %8.3f\n' "$name" "${load:-?}" "$a_cpu" "$a_wall" "$b_cpu" "$b_wall" "$r_cpu" "$r_wall"
    fi
done
