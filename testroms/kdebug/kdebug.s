| KDebug: Gens KMod's debug registers 29-31, written as VDP register writes
| to the control port, as SGDK's kdebug.s does (facts: shared/docs/sgdk.md,
| section KDebug; our own code with SGDK's names and register values).
| Cycle counts: M68000 User's Manual, section 8 (testroms/README.md).
    .text
    .globl  KDebug_Halt, KDebug_Alert, KDebug_AlertNumber
    .globl  KDebug_StartTimer, KDebug_StopTimer
    .globl  timed_burn, kdebug_garbage_timer, kdebug_long_alert
    .globl  kdebug_command_pair_long, kdebug_command_pair_words

| void KDebug_Halt(void): register 29 = 0.
KDebug_Halt:
    move.w  #0x9D00,0xC00004
    rts

| void KDebug_StartTimer(void): register 31 = 0x80. move.w #imm,(xxx).l 20.
KDebug_StartTimer:
    move.w  #0x9F80,0xC00004
    rts

| void KDebug_StopTimer(void): register 31 = 0x40. The same instruction as
| the start, so both writes sit at the same offset into it.
KDebug_StopTimer:
    move.w  #0x9F40,0xC00004
    rts

| void KDebug_Alert(const char *str): one register-30 write per byte, then
| register 30 = 0 to end the message.
KDebug_Alert:
    movea.l 4(%sp),%a0
    lea     0xC00004,%a1
    move.w  #0x9E00,%d0
1:  move.b  (%a0)+,%d0
    beq.s   2f
    move.w  %d0,(%a1)
    bra.s   1b
2:  move.w  %d0,(%a1)           | d0 = 0x9E00: end of message
    rts

| void KDebug_AlertNumber(u32 n): n as 8 hex digits (upper case), then the end.
KDebug_AlertNumber:
    move.l  %d2,-(%sp)
    move.l  8(%sp),%d1
    lea     0xC00004,%a1
    moveq   #7,%d0
1:  rol.l   #4,%d1
    move.w  %d1,%d2
    andi.w  #0xF,%d2
    addi.w  #0x9E30,%d2         | '0'
    cmpi.w  #0x9E39,%d2
    bls.s   2f
    addq.w  #7,%d2              | 'A'..'F'
2:  move.w  %d2,(%a1)
    dbra    %d0,1b
    move.w  #0x9E00,(%a1)
    move.l  (%sp)+,%d2
    rts

| void timed_burn(void): burn() between KDebug_StartTimer and
| KDebug_StopTimer, interrupts masked so no VINT lands inside the span.
| Span by hand (README.md): start's move.w 20 + rts 16 + jsr burn 20 +
| burn 5,038 + jsr KDebug_StopTimer 20 = 5,114 cycles before refresh.
timed_burn:
    move.w  %sr,-(%sp)
    move.w  #0x2700,%sr
    jsr     KDebug_StartTimer
    jsr     burn
    jsr     KDebug_StopTimer
    move.w  (%sp)+,%sr
    rts

| Deliberate garbage: a timer value with bit 0 set (not sr000000).
kdebug_garbage_timer:
    move.w  #0x9F01,0xC00004
    rts

| A message "A" from ONE long write: two register-30 writes, 'A' then 0.
kdebug_long_alert:
    move.l  #0x9E419E00,0xC00004
    rts

| A VRAM address command (write, address 0) whose second word looks like a
| timer stop (0x9F00: CD5-CD2 = 0, A15-A14 = 0, harmless): the second word of a
| command pair is not a register write, so no marker.
kdebug_command_pair_long:
    move.l  #0x40009F00,0xC00004
    rts

| The same with two word writes, the second looking like KDebug_Halt.
kdebug_command_pair_words:
    lea     0xC00004,%a1
    move.w  #0x4000,(%a1)
    move.w  #0x9D00,(%a1)
    rts
