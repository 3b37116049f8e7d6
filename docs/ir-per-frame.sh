#!/usr/bin/env bash
# Host instructions per emulated frame of `retroprof profile`, counted by
# callgrind (valgrind): deterministic, so a change's effect can be measured
# on a busy machine where timings cannot.
#
#   docs/ir-per-frame.sh [BINARY] [ROM...]
#
#   BINARY   the retroprof to measure, a path with a slash (default:
#            target/release/retroprof)
#   ROM      any of vnmd platformer castlecat2 (../shared/roms) and
#            knowncosts heap fullload (testroms/out); default: castlecat2
#            fullload knowncosts
#
# Each ROM runs twice, to frame A and to frame B, and the figure is the
# difference of the two runs' totals over B - A, so the fixed start-up and
# report costs fall out: castlecat2, vnmd, platformer 300-600 (the reference
# input, `--entry interrupted --keep-labels`), knowncosts 300-540 (its
# phase B), heap and fullload 100-200. Full attribution and the per-frame
# records are on (`--csv`, to a temporary file), as in the issue's
# measurement. Needs valgrind (`apt-get install valgrind`); each ROM takes
# about a minute. Not built or run by `cargo test`.
set -euo pipefail
export LC_ALL=C

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$HERE/target/release/retroprof"
# A first argument with a slash is the binary; ROM names have none.
if (($#)) && [[ $1 == */* ]]; then BIN=$1; shift; fi
ROMS=("$@")
((${#ROMS[@]})) || ROMS=(castlecat2 fullload knowncosts)
INPUT='60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C'

die() { echo "ir-per-frame: $*" >&2; exit 2; }
command -v valgrind >/dev/null || die "valgrind not found (apt-get install valgrind)"
[ -x "$BIN" ] || die "$BIN: not an executable (build: cargo build --release -p retroprof)"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# ir FRAMES ARGS... -> the run's total Ir
ir() {
    local frames=$1; shift
    valgrind --tool=callgrind --callgrind-out-file="$TMP/cg.out" \
        "$BIN" profile "$@" --frames "$frames" --csv "$TMP/frames.csv" \
        >/dev/null 2>"$TMP/err.txt" || die "run failed: $(tail -c 300 "$TMP/err.txt")"
    awk '/^(summary|totals):/ { print $2; exit }' "$TMP/cg.out"
}

for r in "${ROMS[@]}"; do
    case $r in
        vnmd | platformer | castlecat2)
            a=300 b=600
            rom="$HERE/../shared/roms/$r/rom.bin"
            args=(--input "$INPUT" --entry interrupted --keep-labels) ;;
        knowncosts) a=300 b=540 rom="$HERE/testroms/out/$r/rom.bin" args=() ;;
        heap | fullload) a=100 b=200 rom="$HERE/testroms/out/$r/rom.bin" args=() ;;
        *) die "unknown ROM $r (vnmd platformer castlecat2 knowncosts heap fullload)" ;;
    esac
    [ -f "$rom" ] || die "$rom missing"
    ia=$(ir "$a" "$rom" "${args[@]}")
    ib=$(ir "$b" "$rom" "${args[@]}")
    echo "$r $(((ib - ia) / (b - a))) Ir/frame (frames $a-$b)"
done
