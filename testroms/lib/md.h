/* Mega Drive hardware addresses used by the runtime.
 * Sources: plutiedev.com (VDP ports, registers, I/O), the Sega "Genesis
 * Software Manual" register descriptions as summarised there. */
#ifndef RP_MD_H
#define RP_MD_H

#include "types.h"

#define VDP_DATA_PORT      ((vu16 *)0xC00000)
#define VDP_DATA_PORT32    ((vu32 *)0xC00000)
#define VDP_CTRL_PORT      ((vu16 *)0xC00004)
#define VDP_CTRL_PORT32    ((vu32 *)0xC00004)
#define VDP_HVCOUNTER      ((vu16 *)0xC00008)
#define PSG_PORT           ((vu8 *)0xC00011)

/* VDP status register bits (plutiedev "VDP status"). */
#define VDP_FIFOEMPTY_FLAG 0x0200
#define VDP_VBLANK_FLAG    0x0008
#define VDP_DMABUSY_FLAG   0x0002

/* Control-port command words (plutiedev "VDP commands"). */
#define VDP_WRITE_VRAM(a)  (0x40000000UL | (((u32)(a) & 0x3FFF) << 16) | (((u32)(a) >> 14) & 3))
#define VDP_WRITE_CRAM(a)  (0xC0000000UL | (((u32)(a) & 0x3FFF) << 16))
#define VDP_WRITE_VSRAM(a) (0x40000010UL | (((u32)(a) & 0x3FFF) << 16))
#define VDP_DMA_VRAM(a)    (VDP_WRITE_VRAM(a) | 0x80)
#define VDP_DMA_CRAM(a)    (VDP_WRITE_CRAM(a) | 0x80)
#define VDP_DMA_VSRAM(a)   (VDP_WRITE_VSRAM(a) | 0x80)

#define IO_VERSION         ((vu8 *)0xA10001)
#define IO_DATA1           ((vu8 *)0xA10003)
#define IO_DATA2           ((vu8 *)0xA10005)
#define IO_CTRL1           ((vu8 *)0xA10009)
#define IO_CTRL2           ((vu8 *)0xA1000B)

/* VRAM layout (H40, 64x32 planes), the same places SGDK uses by default. */
#define VRAM_DMA_DEST      0x8000   /* phase D destination, tiles 1024.. */
#define VRAM_WINDOW        0xB000
#define VRAM_PLANE_A       0xC000
#define VRAM_PLANE_B       0xE000
#define VRAM_SPRITES       0xF800
#define VRAM_HSCROLL       0xFC00
#define PLANE_WIDTH_SHIFT  6        /* 64 cells per plane row */

#define TILE_ATTR(pal, prio, vflip, hflip, index) \
    ((u16)(((prio) << 15) | ((pal) << 13) | ((vflip) << 12) | ((hflip) << 11) | (index)))

#endif
