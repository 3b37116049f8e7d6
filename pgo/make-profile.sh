#!/usr/bin/env bash
# Remake pgo/retroprof.profdata, the profile the release build of this
# workspace's crates is optimised with (pgo/README.md).
#
#   pgo/make-profile.sh           instrument, train, merge; writes
#                                 pgo/retroprof.profdata and pgo/profile.txt
#   pgo/make-profile.sh --check   build with the committed profile; exit 1 if
#                                 a function of the emulator's crates (m68k,
#                                 z80, megadrive, mdprof) changed since it was
#                                 made, or if the key functions it names
#                                 (profile.txt) are not in the build under the
#                                 same names
#
# Needs the llvm-profdata of rustc's own LLVM (`rustc -vV`): LLVM_PROFDATA,
# else llvm-profdata-MAJOR or llvm-profdata on the PATH (Debian: apt-get
# install llvm-MAJOR), else rustup's llvm-tools component. The training
# runs read the shared ROMs at ../shared/roms (missing: an error) and the
# test ROMs in testroms/out. Builds in target-pgo-gen / target-pgo-check
# (the instrumented build needs a target directory of its own: cargo does
# not see the wrapper's switch). Not run by `cargo test`.
set -euo pipefail
export LC_ALL=C

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$HERE"
die() { echo "make-profile: $*" >&2; exit 2; }

check=no
case "${1:-}" in
"") ;;
--check) check=yes ;;
-h | --help) sed -n '2,/^set /{/^#/p}' "$0"; exit 0 ;;
*) die "unknown argument $1 (try --help)" ;;
esac

major=$(rustc -vV | sed -n 's/^LLVM version: *\([0-9]*\).*/\1/p')
[ -n "$major" ] || die "cannot read rustc's LLVM version from rustc -vV"

if [ "$check" = yes ]; then
    want=$(sed -n 's/^llvm-major: *//p' pgo/profile.txt)
    [ "$want" = "$major" ] || die "the profile is for LLVM $want, rustc has LLVM $major: remake it"
    log=$(mktemp)
    trap 'rm -f "$log" "$log".*' EXIT
    # Every crate of ours compiled afresh, so that each prints its warnings.
    rm -rf target-pgo-check/release/.fingerprint/retroprof*
    if ! RETROPROF_PGO=use RETROPROF_PGO_WARN=1 CARGO_TARGET_DIR=target-pgo-check \
        cargo build --release -p retroprof >"$log" 2>&1; then
        tail -20 "$log" >&2
        die "the build failed"
    fi
    # LLVM's warnings name the function (mangled), once per function:
    # "function control flow change detected (hash mismatch)" for a function
    # whose code changed, "no profile data available for function" for one
    # the profile does not have (never run in training, or new).
    grep 'hash mismatch' "$log" | grep -o '_ZN[0-9A-Za-z_$.]*' | sort -u >"$log.changed" || true
    grep 'no profile data available' "$log" | grep -o '_ZN[0-9A-Za-z_$.]*' | sort -u >"$log.missing" || true
    hot='retroprof_(m68k|z80|megadrive|mdprof)'
    changed=$(wc -l <"$log.changed")
    changed_hot=$(grep -c -E "$hot" "$log.changed" || true)
    # The key functions the profile names (profile.txt) must be in this
    # build under the same names: a profile made from other code, or names
    # that depend on where the crates were built, would match nothing and
    # warn about nothing.
    nm target-pgo-check/release/retroprof | awk '{ print $3 }' | sort -u >"$log.syms"
    absent=0
    while read -r name; do
        grep -qxF "$name" "$log.syms" || { echo "  not in this build: $name"; absent=$((absent + 1)); }
    done < <(sed -n 's/^key: *//p' pgo/profile.txt)
    keys=$(grep -c '^key:' pgo/profile.txt || true)
    echo "pgo profile: $changed functions changed since it was made ($changed_hot in the emulator or the profiler),"
    echo "  $(wc -l <"$log.missing") compiled functions not in it (never run in training, or new),"
    echo "  $absent of its $keys key functions not in this build"
    grep -E "$hot" "$log.changed" | head -20 | sed 's/^/  changed: /' || true
    if ((changed_hot > 0 || absent > 0 || keys == 0)); then
        echo "make-profile: the profile is out of date: remake it with pgo/make-profile.sh and commit it" >&2
        exit 1
    fi
    exit 0
fi

profdata=${LLVM_PROFDATA:-}
if [ -z "$profdata" ]; then
    for c in "llvm-profdata-$major" llvm-profdata "$(rustc --print sysroot)"/lib/rustlib/*/bin/llvm-profdata; do
        p=$(command -v "$c" 2>/dev/null) || continue
        v=$("$p" --version | sed -n 's/.*LLVM version \([0-9]*\).*/\1/p')
        if [ "$v" = "$major" ]; then profdata=$p; break; fi
    done
fi
[ -n "$profdata" ] || die "no llvm-profdata of LLVM $major (apt-get install llvm-$major, or rustup component add llvm-tools, or set LLVM_PROFDATA)"

SHARED="$HERE/../shared/roms"
for r in vnmd platformer castlecat2; do
    [ -f "$SHARED/$r/rom.bin" ] || die "$SHARED/$r/rom.bin is missing: the training runs need the shared ROMs"
done

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
RAW="$TMP/raw"
mkdir -p "$RAW"

echo "== instrumented build (target-pgo-gen)"
RETROPROF_PGO="generate:$RAW" CARGO_TARGET_DIR=target-pgo-gen cargo build --release -p retroprof
BIN="$HERE/target-pgo-gen/release/retroprof"

echo "== training runs"
export LLVM_PROFILE_FILE="$RAW/%m-%p.profraw"
INPUT='60-600:R,200-210:C,300-305:S,600-605:S,700-1199:R,900-910:C,1000-1010:C,1100-1110:C'
O="$TMP/out"
mkdir -p "$O"
run() {
    echo "   retroprof $*"
    "$BIN" "$@" >/dev/null 2>"$TMP/err" || { cat "$TMP/err" >&2; die "a training run failed: retroprof $*"; }
}
# The measured case of docs/bench-profile.sh on every ROM we have.
for r in vnmd platformer castlecat2; do
    run profile "$SHARED/$r/rom.bin" --frames 1200 --input "$INPUT" --entry interrupted --keep-labels --csv "$O/$r.csv"
done
for r in knowncosts fullload kdebug; do
    run profile "testroms/out/$r/rom.bin" --frames 1200 --csv "$O/$r.csv"
done
# The other outputs and defaults, and the other subcommands.
run profile "$SHARED/castlecat2/rom.bin" --frames 600 --input "$INPUT" --json "$O/a.json" --html "$O/a.html" \
    --pprof "$O/a.pb.gz" --folded "$O/a.folded" --lines "$O/lines.csv"
run profile "$SHARED/platformer/rom.bin" --frames 600 --input "$INPUT" --json "$O/b.json"
run profile testroms/out/heap/rom.bin --frames 1200 --heap "$O/heap.log"
run profile --frames 600
# `run` is the other compiled 68000 core (no observer), with the renderer.
run run "$SHARED/castlecat2/rom.bin" --frames 1200 --input "$INPUT" --screenshot 600:"$O/shot.png"
run diff "$O/a.json" "$O/b.json"
run heap "$O/heap.log" --symbols testroms/out/heap/rom.elf --png "$O/heap.png"
run samples crates/samples/tests/fixtures/md_samples.txt --map crates/samples/tests/fixtures/md_gnuld.map
unset LLVM_PROFILE_FILE

echo "== merging ($profdata)"
# --sparse leaves out the functions the runs never entered: they are then
# optimised as without a profile, not as cold code.
"$profdata" merge --sparse -o pgo/retroprof.profdata "$RAW"/*.profraw
{
    echo "llvm-major: $major"
    echo "rustc: $(rustc -V)"
    echo "made from: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- crates || echo ' (with uncommitted changes)')"
    # The console's frame loops and the Z80's catch-up, by the names this
    # build gave them (--check looks for them in its own build).
    "$profdata" show --all-functions pgo/retroprof.profdata |
        sed -n 's/^  \([^ ]*;\)\{0,1\}\(_ZN[^ ]*\(System9run_frame17\|System20run_frame_unobserved17\|Z80Sys6run_to17\)[^ ]*\):$/key: \2/p' | sort
} >pgo/profile.txt
cat pgo/profile.txt
ls -l pgo/retroprof.profdata
