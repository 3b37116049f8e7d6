| burn(): a fixed-cost loop for checking a profiler's cycle counts.
| Exactly: move.w #500,%d0 ; 1: dbra %d0,1b ; rts
| 68000 tables (M68000 User's Manual, section 8): move.w #imm,Dn 8,
| dbra taken 10 (x500), dbra expired 14, rts 16 => 5,038 cycles per call
| before DRAM refresh. The caller's jsr/bsr is charged to the caller.
    .text
    .globl  burn
burn:
    move.w  #500,%d0
1:  dbra    %d0,1b
    rts
