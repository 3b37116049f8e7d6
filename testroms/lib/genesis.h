/* The retroprof test-ROM runtime: a small subset of the SGDK API (same
 * names, our own code) that a profiler must understand. */
#ifndef RP_GENESIS_H
#define RP_GENESIS_H

#include "types.h"
#include "md.h"

/* ---- sys.c ------------------------------------------------------------- */
extern vu32 vblank_count;          /* VBlanks since boot (SGDK's vtimer), _VINT */
bool SYS_doVBlankProcess(void);    /* VDP_waitVBlank(TRUE), DMA flush, JOY_update */
bool addFrameLoad(u16 frameLoad, u32 vtime); /* frame-load helper called by VDP_waitVBlank */
u16 SYS_getCPULoad(void);          /* SGDK's load figure (mean of 8 frames) */
void SYS_setInterruptMaskLevel(u16 level);
int main(bool hard_reset);

/* ---- vdp.c ------------------------------------------------------------- */
typedef enum { BG_A = 0, BG_B = 1, WINDOW = 2 } VDPPlane;
void VDP_init(void);
void VDP_setEnable(bool on);
bool VDP_waitVBlank(bool forceNext);
void VDP_setTileMapXY(VDPPlane plane, u16 tile, u16 x, u16 y);
void VDP_fillTileMapRect(VDPPlane plane, u16 tile, u16 x, u16 y, u16 w, u16 h);
void VDP_clearPlane(VDPPlane plane);
void VDP_drawText(const char *str, u16 x, u16 y);
void VDP_clearText(u16 x, u16 y, u16 w);
void VDP_loadTileData(const u32 *data, u16 index, u16 num);
void PAL_setColors(u16 index, const u16 *colors, u16 count);
u16 VDP_loadFont(u16 index);       /* draws our own 5x7 font into tiles; returns count */

/* Sprite attribute table cache in RAM, uploaded by DMA each frame. */
typedef struct {
    s16 y;           /* screen y + 128 */
    u16 size_link;   /* bits 11-10 width-1, 9-8 height-1, 6-0 link */
    u16 attribut;    /* TILE_ATTR */
    s16 x;           /* screen x + 128 */
} VDPSprite;
#define MAX_VDP_SPRITE 80
extern VDPSprite vdpSpriteCache[MAX_VDP_SPRITE];
#define SPRITE_SIZE(w, h) ((((w) - 1) << 2) | ((h) - 1))
void VDP_updateSprites(u16 num);   /* queues the DMA of num entries (num * 8 bytes) */

/* ---- dma.c ------------------------------------------------------------- */
typedef enum { DMA_VRAM = 0, DMA_CRAM = 1, DMA_VSRAM = 2 } DMAType;
bool DMA_queueDma(DMAType location, const void *from, u16 to, u16 len, u16 step);
void DMA_flushQueue(void);
u16 DMA_getQueueSize(void);
u32 DMA_getQueueTransferSize(void);
extern vu32 dma_queued_bytes;      /* bytes queued by the last finished game loop */
extern vu32 dma_flushed_bytes;     /* bytes sent by the last flush */
extern vu32 dma_total_bytes;       /* all bytes flushed since boot */

/* ---- joy.c ------------------------------------------------------------- */
#define BUTTON_UP    0x0001
#define BUTTON_DOWN  0x0002
#define BUTTON_LEFT  0x0004
#define BUTTON_RIGHT 0x0008
#define BUTTON_B     0x0010
#define BUTTON_C     0x0020
#define BUTTON_A     0x0040
#define BUTTON_START 0x0080
void JOY_init(void);
void JOY_update(void);
u16 JOY_readJoypad(u16 joy);
extern vu16 joy_state[2];

/* ---- memory.c ---------------------------------------------------------- */
void MEM_init(void);
void *MEM_alloc(u16 size);
void MEM_free(void *ptr);
u16 MEM_getFree(void);
u16 MEM_getAllocated(void);

/* ---- burn.s ------------------------------------------------------------ */
void burn(void);                   /* 5,038 cycles by the 68000 tables */

/* ---- text.c ------------------------------------------------------------ */
void uintToStr(u32 value, char *str, u16 minsize);

#endif
