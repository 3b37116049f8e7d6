#ifndef RP_GFX_H
#define RP_GFX_H
#include "types.h"
#define FONT_TILE 16        /* 64 font tiles from here (vdp.c FONT_INDEX) */
#define BALL_TILE 96        /* 4 tiles */
#define BG_TILE 100         /* 2 tiles: checker, stripes */
#define BLOB_TILE 1024      /* DMA destination 0x8000 = tile 1024 */
void GFX_loadPalettes(void);
void GFX_loadBall(u16 index);
void GFX_loadBackground(u16 index);
#endif
