/* System part of the runtime: start-up, VBlank process, SGDK-style load. */
#include "genesis.h"

/* VBlanks since boot, incremented by _VINT (sega.s). SGDK calls it vtimer. */
vu32 vblank_count;

/* SGDK-style frame load ring (see SYS_getCPULoad). */
#define LOAD_FRAMES 8
static u16 frameLoads[LOAD_FRAMES];
static u16 frameLoadIndex;
static u16 cpuFrameLoad;
static u32 lastVTimer;

void SYS_setInterruptMaskLevel(u16 level)
{
    u16 sr = 0x2000 | ((level & 7) << 8);
    __asm__ volatile("move.w %0,%%sr" : : "d"(sr) : "cc");
}

/* Called by VDP_waitVBlank before it spins (a call out of the idle function).
 * frameLoad is the adjusted V-counter (0..255 = one frame); a missed frame
 * adds 256 per extra VBlank, like SGDK. Returns TRUE when frames were missed. */
NO_INLINE bool addFrameLoad(u16 frameLoad, u32 vtime)
{
    u32 delta = vtime - lastVTimer;
    bool miss = FALSE;
    u16 v = frameLoad;

    if (delta > 1) {
        v += (u16)((delta - 1) << 8);
        miss = TRUE;
    }
    cpuFrameLoad -= frameLoads[frameLoadIndex];
    frameLoads[frameLoadIndex] = v;
    cpuFrameLoad += v;
    frameLoadIndex = (frameLoadIndex + 1) & (LOAD_FRAMES - 1);
    lastVTimer = vtime;
    return miss;
}

/* Percentage of the mean load of the last 8 frames (SGDK's formula:
 * sum * 100 / (8 * 256)). */
u16 SYS_getCPULoad(void)
{
    return (u16)(((u32)cpuFrameLoad * 100) >> 11);
}

/* Wait for the next VBlank, then do the VBlank work: flush the DMA queue and
 * read the pads. Same order as SGDK's SYS_doVBlankProcess(). */
bool SYS_doVBlankProcess(void)
{
    bool late;
    dma_queued_bytes = DMA_getQueueTransferSize();   /* this loop's DMA */
    late = VDP_waitVBlank(TRUE);
    DMA_flushQueue();
    JOY_update();
    return late;
}

void *memcpy(void *to, const void *from, unsigned long len)
{
    u8 *d = to;
    const u8 *s = from;
    while (len--) *d++ = *s++;
    return to;
}

void *memset(void *to, int value, unsigned long len)
{
    u8 *d = to;
    while (len--) *d++ = (u8)value;
    return to;
}

/* Called from _Entry_Point (sega.s) with RAM cleared and .data copied. */
void _start_entry(void)
{
    MEM_init();
    VDP_init();
    JOY_init();
    SYS_setInterruptMaskLevel(3);   /* VINT (level 6) on, as SGDK */
    main(TRUE);
    for (;;) SYS_doVBlankProcess();
}
