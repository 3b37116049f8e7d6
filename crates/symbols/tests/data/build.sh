#!/bin/sh
# Rebuilds inline.elf and inline.symbol.txt from inline.c (checked in, so
# tests need no cross compiler).
set -e
cd "$(dirname "$0")"
m68k-linux-gnu-gcc -m68000 -O2 -g -ffreestanding -nostdlib -static \
  -fno-pic -fno-asynchronous-unwind-tables -Wl,-Ttext=0x200 -Wl,-Tbss=0xFF0000 \
  -fdebug-prefix-map="$(pwd)"=. -Wl,--build-id=none -Wl,-e,_start -o inline.elf inline.c
m68k-linux-gnu-nm -n -l inline.elf > inline.symbol.txt
