| Vectors, cartridge header, entry point, exception handlers and the
| vertical-interrupt handler of the retroprof test-ROM runtime.
| Our own code; symbol names follow SGDK's boot code (_Entry_Point, _VINT)
| so a profiler sees familiar names. Header layout: plutiedev.com "ROM header".

    .section .text.vectors,"ax"
    .globl  _Vectors
_Vectors:
    .long   0x01000000              | 0: initial SSP = top of work RAM (grows down)
    .long   _Entry_Point            | 1: reset PC
    .long   .Lexc2, .Lexc3, .Lexc4, .Lexc5, .Lexc6, .Lexc7
    .long   .Lexc8, .Lexc9, .Lexc10, .Lexc11, .Lexc12, .Lexc13, .Lexc14, .Lexc15
    .long   .Lexc16, .Lexc17, .Lexc18, .Lexc19, .Lexc20, .Lexc21, .Lexc22, .Lexc23
    .long   .Lexc24, .Lexc25, .Lexc26, .Lexc27, .Lexc28, .Lexc29
    .long   _VINT                   | 30: level 6 autovector = VDP vertical interrupt
    .long   .Lexc31
    .long   .Lexc32, .Lexc33, .Lexc34, .Lexc35, .Lexc36, .Lexc37, .Lexc38, .Lexc39
    .long   .Lexc40, .Lexc41, .Lexc42, .Lexc43, .Lexc44, .Lexc45, .Lexc46, .Lexc47
    .long   .Lexc48, .Lexc49, .Lexc50, .Lexc51, .Lexc52, .Lexc53, .Lexc54, .Lexc55
    .long   .Lexc56, .Lexc57, .Lexc58, .Lexc59, .Lexc60, .Lexc61, .Lexc62, .Lexc63

| Cartridge header at 0x100 (0x100 bytes). The ROM end address (0x1A4) and
| the checksum (0x18E) are patched by build.sh after padding.
    .globl  rom_header
rom_header:
    .ascii  "SEGA MEGA DRIVE "                                  | 0x100 system type
    .ascii  "(C)RPRF 2026.JAN"                                  | 0x110 copyright
    .ascii  "RETROPROF TEST ROM                              "  | 0x120 domestic name (48)
    .ascii  "RETROPROF TEST ROM                              "  | 0x150 overseas name (48)
    .ascii  "GM 00000000-00"                                    | 0x180 serial
    .word   0x0000                                              | 0x18E checksum (patched)
    .ascii  "J               "                                  | 0x190 devices: 3-button pad
    .long   0x00000000, 0x0001FFFF                              | 0x1A0 ROM start, end (patched)
    .long   0x00FF0000, 0x00FFFFFF                              | 0x1A8 RAM start, end
    .ascii  "            "                                      | 0x1B0 no SRAM
    .ascii  "            "                                      | 0x1BC modem
    .ascii  "                                        "          | 0x1C8 notes (40)
    .ascii  "JUE             "                                  | 0x1F0 regions

| ---------------------------------------------------------------------------
| Entry point (0x200).
    .text
    .globl  _Entry_Point
_Entry_Point:
    move.w  #0x2700,%sr             | no interrupts during init
    lea     0x01000000,%sp

| TMSS: consoles with version != 0 need "SEGA" at 0xA14000 before VDP use.
    move.b  0xA10001,%d0
    andi.b  #0x0F,%d0
    beq.s   1f
    move.l  #0x53454741,0xA14000    | 'SEGA'
1:
| Z80: take the bus, release reset, put "di; jr $" at 0x0000, then hold the
| Z80 in reset and give the bus back. The grant wait is bounded so a partial
| emulator cannot hang here.
    move.w  #0x0100,0xA11100        | bus request
    move.w  #0x0100,0xA11200        | release reset
    move.w  #0x3FFF,%d1
2:  btst    #0,0xA11100             | 0 = bus granted
    dbeq    %d1,2b
    move.b  #0xF3,0xA00000          | di
    move.b  #0x18,0xA00001          | jr $
    move.b  #0xFE,0xA00002
    move.w  #0x0000,0xA11200        | assert reset: Z80 held in reset
    move.w  #0x0000,0xA11100        | release the bus

| PSG: silence the four channels.
    lea     0xC00011,%a0
    move.b  #0x9F,(%a0)
    move.b  #0xBF,(%a0)
    move.b  #0xDF,(%a0)
    move.b  #0xFF,(%a0)

| Clear all 64 KB of work RAM (the stack is empty at this point).
    lea     0x00FF0000,%a0
    moveq   #0,%d0
    move.w  #0x3FFF,%d1
3:  move.l  %d0,(%a0)+
    dbra    %d1,3b

| Copy initialised data from ROM (_stext) to RAM (.data at 0xFF0000).
    lea     _stext,%a0
    lea     0x00FF0000,%a1
    move.l  #_sdata,%d1             | size in bytes (even)
    lsr.l   #1,%d1
    bra.s   5f
4:  move.w  (%a0)+,(%a1)+
5:  dbra    %d1,4b

    jsr     _start_entry
6:  bra.s   6b

| ---------------------------------------------------------------------------
| Vertical interrupt (level 6). Counts VBlanks; all VBlank work (DMA queue
| flush, pad read) runs in SYS_doVBlankProcess() after VDP_waitVBlank(), as in
| SGDK, so that a game loop that overruns does not get its DMA queue flushed
| half-built.
    .globl  _VINT
_VINT:
    addq.l  #1,vblank_count
    rte

| ---------------------------------------------------------------------------
| Every other vector lands here: record the vector number, the stacked SR and
| PC (and the access address for bus/address errors), turn the backdrop red
| and halt. exception_vector stays 0 while nothing unexpected happened.
    .globl  _Exception_Stubs
_Exception_Stubs:
.Lexc2:
    move.w  #2,exception_vector
    bra.s   .Lgroup0
.Lexc3:
    move.w  #3,exception_vector
.Lgroup0:
    move.l  2(%sp),exception_address    | group-0 frame: fc.w, addr.l, ir.w, sr.w, pc.l
    addq.l  #8,%sp
    bra     exception_halt

    .irp n, 4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63
.Lexc\n:
    move.w  #\n,exception_vector
    bra     exception_halt
    .endr

    .globl  exception_halt
exception_halt:
    move.w  #0x2700,%sr
    move.w  (%sp),exception_sr
    move.l  2(%sp),exception_pc
    addq.w  #1,exception_count
    move.l  #0xC0000000,0xC00004    | CRAM write, colour 0 (backdrop)
    move.w  #0x000E,0xC00000        | red
    move.w  #0x8700,0xC00004        | backdrop = palette 0 colour 0
7:  bra.s   7b

    .section .bss
    .globl  exception_vector, exception_pc, exception_sr, exception_address, exception_count
    .balign 2
exception_vector:   .skip 2
exception_sr:       .skip 2
exception_count:    .skip 2
    .balign 2
exception_pc:       .skip 4
exception_address:  .skip 4
