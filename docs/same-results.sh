#!/usr/bin/env bash
# Do two builds give the same results? For speed work, which must change
# nothing else.
#
#   docs/same-results.sh BASE_RETROPROF NEW_RETROPROF [BASE_STATEHASH NEW_STATEHASH]
#
# Runs both `retroprof` binaries with the text report, `--csv`, `--json` and
# `--functions`, 1,200 frames, on vnmd, platformer and castlecat2
# (../shared/roms; the reference input, `--entry interrupted --keep-labels`),
# on knowncosts, heap and fullload (testroms/out), and on the built-in demo
# (600 frames), and compares every file byte for byte. With the two
# `statehash` examples (`cargo build --release -p retroprof-megadrive
# --example statehash`, target/release/examples/statehash) it also compares
# their per-frame digests of the whole machine (`STATEHASH_Z80=1`, 1,200
# frames, the same ROMs and kdebug). The speed line on stderr is left
# out. Prints the differences and exits 1 if
# any, else prints "same results" and exits 0. Not run by `cargo test`.
set -uo pipefail
export LC_ALL=C

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
die() { echo "same-results: $*" >&2; exit 2; }
(($# == 2 || $# == 4)) || die "usage: same-results.sh BASE_RETROPROF NEW_RETROPROF [BASE_STATEHASH NEW_STATEHASH]"
for b in "$@"; do [ -x "$b" ] || die "$b: not an executable"; done
SHARED="$HERE/../shared/roms"
TEST="$HERE/testroms/out"
INPUT='60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C'

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# outputs BIN DIR
outputs() {
    local bin=$1 out=$2 n
    mkdir -p "$out"
    for n in vnmd platformer castlecat2; do
        "$bin" profile "$SHARED/$n/rom.bin" --frames 1200 --input "$INPUT" --entry interrupted --keep-labels \
            --csv "$out/$n.csv" --json "$out/$n.json" --functions "$out/$n.funcs.csv" >"$out/$n.txt" 2>"$out/$n.err"
        echo "exit $?" >>"$out/$n.txt"
    done
    for n in knowncosts heap fullload; do
        "$bin" profile "$TEST/$n/rom.bin" --frames 1200 \
            --csv "$out/$n.csv" --json "$out/$n.json" --functions "$out/$n.funcs.csv" >"$out/$n.txt" 2>"$out/$n.err"
        echo "exit $?" >>"$out/$n.txt"
    done
    "$bin" profile --frames 600 --csv "$out/demo.csv" --json "$out/demo.json" --functions "$out/demo.funcs.csv" \
        >"$out/demo.txt" 2>"$out/demo.err"
    echo "exit $?" >>"$out/demo.txt"
}

# hashes STATEHASH DIR
hashes() {
    local bin=$1 out=$2 n
    mkdir -p "$out"
    for n in vnmd platformer castlecat2; do
        STATEHASH_Z80=1 "$bin" "$SHARED/$n/rom.bin" 1200 "$INPUT" >"$out/$n" 2>&1
    done
    for n in knowncosts heap fullload kdebug; do
        STATEHASH_Z80=1 "$bin" "$TEST/$n/rom.bin" 1200 >"$out/$n" 2>&1
    done
}

# Run from the temporary folder so relative paths in messages match.
cd "$TMP" || die "no temporary folder"
outputs "$1" base
outputs "$2" new
status=0
# stderr's last line is the run's speed ("N frames in T s"): not a result.
for f in base/*.err new/*.err; do sed -i '/^[0-9]* frames in [0-9.]* s (/d' "$f"; done
diff -r base new || status=1
if (($# == 4)); then
    hashes "$3" hbase
    hashes "$4" hnew
    diff -r hbase hnew || status=1
fi
((status)) || echo "same results"
exit "$status"
