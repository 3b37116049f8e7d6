| Integer helpers that gcc calls on the 68000 (no 32-bit multiply/divide
| instructions). Our own implementation, written for the retroprof test ROMs
| because Debian's m68k libgcc is 68020 code. gcc m68k calling convention:
| arguments are 32-bit stack slots (4(sp) = first), result in d0; d0-d1/a0-a1
| are scratch, everything else is preserved.
|
| Cycle figures in comments are from the M68000 User's Manual timing tables
| (section 8); divu.w time depends on the operands (see testroms/README.md).

    .text

| u32 __mulsi3(u32 a, u32 b): low 32 bits of a*b.
    .globl  __mulsi3
__mulsi3:
    move.w  4(%sp),%d0          | a.hi
    mulu.w  10(%sp),%d0         | a.hi * b.lo
    move.w  8(%sp),%d1          | b.hi
    mulu.w  6(%sp),%d1          | b.hi * a.lo
    add.w   %d1,%d0             | sum of cross products (low 16 bits matter)
    swap    %d0
    clr.w   %d0                 | cross << 16
    move.w  6(%sp),%d1          | a.lo
    mulu.w  10(%sp),%d1         | a.lo * b.lo
    add.l   %d1,%d0
    rts

| u32 __udivsi3(u32 n, u32 d): n / d. Division by zero traps (vector 5)
| through divu.w, like libgcc.
    .globl  __udivsi3
__udivsi3:
    move.l  %d2,-(%sp)          | 12
    move.l  8(%sp),%d0          | 16  n
    move.l  12(%sp),%d1         | 16  d
    bsr.w   udiv32              | 18
    move.l  (%sp)+,%d2          | 12
    rts                         | 16

| u32 __umodsi3(u32 n, u32 d): n % d.
    .globl  __umodsi3
__umodsi3:
    move.l  %d2,-(%sp)
    move.l  8(%sp),%d0
    move.l  12(%sp),%d1
    bsr.w   udiv32
    move.l  %d1,%d0
    move.l  (%sp)+,%d2
    rts

| s32 __divsi3(s32 n, s32 d): n / d rounded toward zero. Calls __udivsi3
| on the magnitudes (so a profile shows both, as with libgcc).
    .globl  __divsi3
__divsi3:
    move.l  %d2,-(%sp)          | 12  d2 = sign of the result
    moveq   #0,%d2              | 4
    move.l  12(%sp),%d1         | 16  d
    bpl.s   1f                  | 10 taken (d >= 0)
    neg.l   %d1
    not.b   %d2
1:  move.l  8(%sp),%d0          | 16  n
    bpl.s   2f                  | 10 taken (n >= 0)
    neg.l   %d0
    not.b   %d2
2:  move.l  %d1,-(%sp)          | 12
    move.l  %d0,-(%sp)          | 12
    bsr.w   __udivsi3           | 18
    addq.l  #8,%sp              | 8
    tst.b   %d2                 | 4
    beq.s   3f                  | 10 taken (result positive)
    neg.l   %d0
3:  move.l  (%sp)+,%d2          | 12
    rts                         | 16

| s32 __modsi3(s32 n, s32 d): remainder with the sign of n.
    .globl  __modsi3
__modsi3:
    move.l  %d2,-(%sp)
    move.l  12(%sp),%d1         | d
    bpl.s   1f
    neg.l   %d1
1:  move.l  8(%sp),%d0          | n
    bpl.s   2f
    neg.l   %d0
    bsr.w   udiv32
    move.l  %d1,%d0
    neg.l   %d0
    move.l  (%sp)+,%d2
    rts
2:  bsr.w   udiv32
    move.l  %d1,%d0
    move.l  (%sp)+,%d2
    rts

| Core: d0 = n, d1 = d  ->  d0 = n / d, d1 = n % d. Clobbers d2 only.
| d < 0x10000: two divu.w (high word, then remainder:low word).
| d >= 0x10000: the quotient fits in 16 bits; 32-step shift-subtract.
udiv32:
    cmp.l   #0xFFFF,%d1         | 14
    bhi.s   .Lbig               | 8 not taken
    move.l  %d0,%d2             | 4   d2 = n
    clr.w   %d0                 | 4
    swap    %d0                 | 4   d0 = n.hi
    divu.w  %d1,%d0             | d0 = r1:q.hi
    swap    %d2                 | 4   d2 = n.lo:n.hi
    move.w  %d0,%d2             | 4   d2 = n.lo:q.hi
    swap    %d2                 | 4   d2 = q.hi:n.lo
    move.w  %d2,%d0             | 4   d0 = r1:n.lo
    divu.w  %d1,%d0             | d0 = rem:q.lo
    move.w  %d0,%d2             | 4   d2 = q.hi:q.lo
    clr.w   %d0                 | 4
    swap    %d0                 | 4   d0 = rem
    move.l  %d0,%d1             | 4
    move.l  %d2,%d0             | 4
    rts                         | 16
.Lbig:
    move.l  %d3,-(%sp)
    moveq   #0,%d2              | remainder
    moveq   #31,%d3
4:  add.l   %d0,%d0             | next dividend bit into X
    addx.l  %d2,%d2
    cmp.l   %d1,%d2
    bcs.s   5f
    sub.l   %d1,%d2
    addq.w  #1,%d0              | quotient bit (bit 0 is free after the shift)
5:  dbra    %d3,4b
    move.l  %d2,%d1
    move.l  (%sp)+,%d3
    rts
