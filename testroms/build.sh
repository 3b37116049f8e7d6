#!/usr/bin/env bash
# Build the retroprof test ROMs from source.
#
#   testroms/build.sh            build every ROM into testroms/out/<rom>/
#   testroms/build.sh --out DIR  build into DIR/<rom>/ instead
#   testroms/build.sh --check    rebuild into a temporary folder and compare
#                                byte for byte with the committed files in
#                                testroms/out/; print each file that differs
#                                and exit 1 if any does (CI runs this)
#
# Each ROM folder gets rom.bin (padded, header fixed up, checksum at 0x18E),
# rom.elf (with DWARF) and symbol.txt (`nm -n rom.elf`, as SGDK writes it).
# Needs Debian's gcc-m68k-linux-gnu and binutils-m68k-linux-gnu (README.md);
# only bash, coreutils and awk besides. Builds are deterministic and independent
# of the checkout location (-ffile-prefix-map, fixed object order, no dates).
set -euo pipefail
export LC_ALL=C

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CROSS="${CROSS:-m68k-linux-gnu-}"
CC="${CROSS}gcc"
LD="${CROSS}ld"
NM="${CROSS}nm"
OBJCOPY="${CROSS}objcopy"

ROMS=(knowncosts heap fullload)
LIB_SRC=(lib/sega.s lib/sys.c lib/vdp.c lib/dma.c lib/joy.c lib/memory.c
         lib/text.c lib/gfx.c lib/libgcc.s lib/burn.s)

CFLAGS=(-m68000 -O2 -g -std=gnu99 -ffreestanding -fno-builtin -fno-pic -fno-pie
        -fomit-frame-pointer -fno-tree-loop-distribute-patterns
        -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-stack-protector
        -fno-common -Wall -Wextra -Wno-main
        "-ffile-prefix-map=${HERE}=testroms" -Ilib)
ASFLAGS=(-m68000 -g "-ffile-prefix-map=${HERE}=testroms"
         "-Wa,--debug-prefix-map=${HERE}=testroms")

die() { echo "build.sh: $*" >&2; exit 1; }

for tool in "$CC" "$LD" "$NM" "$OBJCOPY"; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "$tool not found (apt-get install gcc-m68k-linux-gnu binutils-m68k-linux-gnu)"
done

# write_be BYTES_FILE OFFSET HEX: write big-endian bytes (hex string) in place.
write_be() {
    local file=$1 off=$2 hex=$3 esc="" i
    for ((i = 0; i < ${#hex}; i += 2)); do esc+="\\x${hex:i:2}"; done
    printf "$esc" | dd of="$file" bs=1 seek="$off" conv=notrunc status=none
}

# Symbols every ROM must define (the API a profiler relies on) and, per ROM,
# its RAM account.
COMMON_SYMS=(_Entry_Point _VINT exception_halt VDP_waitVBlank addFrameLoad
             SYS_doVBlankProcess DMA_queueDma DMA_flushQueue VDP_setTileMapXY
             VDP_fillTileMapRect VDP_updateSprites JOY_update MEM_alloc MEM_free
             burn __mulsi3 __divsi3 __udivsi3 __modsi3 __umodsi3
             vblank_count loop_count dma_queued_bytes exception_vector _bend)
declare -A ROM_SYMS=(
    [knowncosts]="phase phase_frame phase_start_vblank phase_start_loop phase_dropped cpu_load burn_calls div_calls"
    [heap]="heap_allocs heap_frees heap_live_bytes heap_live_blocks heap_leaked_bytes heap_leaked_blocks heap_done"
    [fullload]="loop_count work_units div_calls math_sum copy_sum cpu_load z80_started"
)

sym_addr() { awk -v n="$2" '$3 == n { print $1; exit }' "$1"; }

# check_rom NAME DIR: sanity checks on a fresh build.
check_rom() {
    local name=$1 dir=$2 s a bytes
    [ "$(dd if="$dir/rom.bin" bs=1 skip=256 count=15 status=none)" = "SEGA MEGA DRIVE" ] ||
        die "$name: header missing at 0x100"
    for s in "${COMMON_SYMS[@]}" ${ROM_SYMS[$name]}; do
        [ -n "$(sym_addr "$dir/symbol.txt" "$s")" ] || die "$name: symbol $s missing from symbol.txt"
    done
    # burn must stay exactly move.w #N,%d0; 1: dbra %d0,1b; rts with the N of
    # lib/burn.s (500 in the committed ROMs: 5,038 cycles; variants built
    # from a copy of this folder, as the diff test does, may change N).
    local n want
    n=$(sed -n 's/^[[:space:]]*move\.w[[:space:]]*#\([0-9][0-9]*\),%d0.*/\1/p' "$HERE/lib/burn.s" | head -1)
    [ -n "$n" ] && ((n < 65536)) || die "lib/burn.s: no move.w #N,%d0 with N < 65536"
    want=$(printf '303c%04x51c8fffe4e75' "$n")
    a=$(sym_addr "$dir/symbol.txt" burn)
    bytes=$(od -An -tx1 -v -j $((16#$a)) -N 10 "$dir/rom.bin" | tr -d ' \n')
    [ "$bytes" = "$want" ] ||
        die "$name: burn at 0x$a is not move.w #$n,d0; dbra d0,*; rts (bytes $bytes)"
}

# build_rom NAME OUTDIR
build_rom() {
    local name=$1 out=$2 src o objs=()
    local tmp
    tmp=$(mktemp -d)
    CLEANUP+=("$tmp")
    mkdir -p "$tmp/obj"
    for src in "${LIB_SRC[@]}" $(cd "$HERE" && ls "$name"/*.c "$name"/*.s 2>/dev/null | sort); do
        o="$tmp/obj/$(echo "$src" | tr '/' '_').o"
        case "$src" in
            *.c) (cd "$HERE" && "$CC" "${CFLAGS[@]}" -c "$src" -o "$o") ;;
            *.s) (cd "$HERE" && "$CC" "${ASFLAGS[@]}" -c "$src" -o "$o") ;;
        esac
        objs+=("$o")
    done
    "$LD" -T "$HERE/md.ld" -nostdlib --build-id=none -z noexecstack -o "$tmp/rom.elf" "${objs[@]}" ||
        die "link failed for $name"

    "$OBJCOPY" -O binary "$tmp/rom.elf" "$tmp/rom.bin"
    local raw size
    raw=$(stat -c %s "$tmp/rom.bin")
    size=131072                       # at least 128 KB, then a power of two
    while ((size < raw)); do size=$((size * 2)); done
    ((size <= 4194304)) || die "$name: ROM too big ($raw bytes)"
    truncate -s "$size" "$tmp/rom.bin"

    # Header fix-ups: ROM end address (0x1A4), then the checksum (0x18E) =
    # sum of the big-endian words from 0x200 to the end, modulo 65536.
    write_be "$tmp/rom.bin" $((0x1A4)) "$(printf '%08x' $((size - 1)))"
    local sum
    sum=$(od -An -v -tu2 --endian=big -j 512 "$tmp/rom.bin" |
          awk '{ for (i = 1; i <= NF; i++) s = (s + $i) % 65536 } END { printf "%04x", s }')
    write_be "$tmp/rom.bin" $((0x18E)) "$sum"

    # symbol.txt exactly as SGDK's makefile writes it: nm -n on the ELF.
    "$NM" -n "$tmp/rom.elf" > "$tmp/symbol.txt"

    check_rom "$name" "$tmp"

    # Each output is written whole: copy next to its place, then rename.
    mkdir -p "$out"
    local f
    for f in rom.bin rom.elf symbol.txt; do
        cp "$tmp/$f" "$out/.$f.new"
        chmod 644 "$out/.$f.new"
        mv -f "$out/.$f.new" "$out/$f"
    done
}

CLEANUP=()
trap 'rm -rf "${CLEANUP[@]}"' EXIT

MODE=build
OUTROOT="$HERE/out"
while (($#)); do
    case "$1" in
        --check) MODE=check ;;
        --out) shift; (($#)) || die "--out needs a folder"; OUTROOT=$1 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) die "unknown argument: $1 (try --help)" ;;
    esac
    shift
done

if [ "$MODE" = build ]; then
    for rom in "${ROMS[@]}"; do
        build_rom "$rom" "$OUTROOT/$rom"
        echo "built $OUTROOT/$rom/{rom.bin,rom.elf,symbol.txt}"
    done
    exit 0
fi

TMPROOT=$(mktemp -d)
CLEANUP+=("$TMPROOT")
status=0
for rom in "${ROMS[@]}"; do
    build_rom "$rom" "$TMPROOT/$rom"
    for f in rom.bin rom.elf symbol.txt; do
        committed="$HERE/out/$rom/$f"
        if [ ! -f "$committed" ]; then
            echo "MISSING testroms/out/$rom/$f (run testroms/build.sh and commit it)"
            status=1
        elif ! cmp -s "$committed" "$TMPROOT/$rom/$f"; then
            echo "DIFFERS testroms/out/$rom/$f: $(cmp "$committed" "$TMPROOT/$rom/$f" 2>&1 | head -1)"
            status=1
        else
            echo "ok      testroms/out/$rom/$f"
        fi
    done
done
if [ "$status" -ne 0 ]; then
    echo "testroms: committed ROMs differ from a rebuild of the sources" >&2
fi
exit "$status"
