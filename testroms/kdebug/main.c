/* retroprof KDebug test ROM (NTSC, H40): the game's own debug markers
 * (Gens KMod's registers 29-31, as SGDK's KDebug_* functions write them;
 * shared/docs/sgdk.md, section KDebug), with known timer spans, exact
 * messages, deliberate garbage and one halt (testroms/README.md).
 *
 * At start (frame of the first loop): a stop with no start (garbage),
 * "KDEBUG TEST ROM", the number 0x1234ABCD as "1234ABCD", a message with
 * a non-printable byte (garbage), a timer value 0x01 (garbage), "A" from
 * one long write, and two command pairs whose second word looks like a
 * KDebug write (not markers).
 * Loops 0..7: timed_burn() (burn() between KDebug_StartTimer and
 * KDebug_StopTimer), then the loop number as 8 hex digits.
 * Loop 5: KDebug_Halt() after its number. Loop 8: "DONE". Then idle. */
#include "genesis.h"
#include "gfx.h"

#define TIMED_LOOPS 8
#define HALT_LOOP 5

void KDebug_Halt(void);
void KDebug_Alert(const char *str);
void KDebug_AlertNumber(u32 n);
void KDebug_StartTimer(void);
void KDebug_StopTimer(void);
void timed_burn(void);
void kdebug_garbage_timer(void);
void kdebug_long_alert(void);
void kdebug_command_pair_long(void);
void kdebug_command_pair_words(void);

/* ---- the ROM's own account (global symbols, see symbol.txt) ------------- */
vu32 loop_count;                 /* finished game loops */
vu32 burn_calls;                 /* timed burn() calls */
vu16 kdebug_halted;              /* 1 once KDebug_Halt() was called */

int main(bool hard_reset)
{
    (void)hard_reset;
    GFX_loadPalettes();
    VDP_loadFont(FONT_TILE);
    VDP_drawText("RETROPROF KDEBUG TEST ROM", 2, 1);
    VDP_drawText("TIMERS, MESSAGES, ONE HALT", 2, 3);
    VDP_setEnable(TRUE);
    SYS_doVBlankProcess();

    KDebug_StopTimer();                 /* garbage: no timer started */
    KDebug_Alert("KDEBUG TEST ROM");
    KDebug_AlertNumber(0x1234ABCD);
    KDebug_Alert("BAD\001STRING");      /* garbage: a non-printable byte */
    kdebug_garbage_timer();             /* garbage: timer value 0x01 */
    kdebug_long_alert();                /* "A" */
    kdebug_command_pair_long();         /* not a marker */
    kdebug_command_pair_words();        /* not a marker */
    for (;;) {
        if (loop_count < TIMED_LOOPS) {
            timed_burn();
            burn_calls++;
            KDebug_AlertNumber(loop_count);
            if (loop_count == HALT_LOOP) {
                KDebug_Halt();
                kdebug_halted = 1;
            }
        } else if (loop_count == TIMED_LOOPS) {
            KDebug_Alert("DONE");
        }
        loop_count++;
        SYS_doVBlankProcess();
    }
}
