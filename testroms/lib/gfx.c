/* Graphics drawn by code at start-up: palettes, a shaded 16x16 ball sprite,
 * two background tiles. All our own. */
#include "genesis.h"
#include "gfx.h"

static const u16 palettes[64] = {
    /* PAL0: backdrop, text ink, text shadow, yellow, bg checker x2,
     * bg stripes x2, bricks x4 (DMA blob), mortar, text paper, 2 spare */
    0x0000, 0x0EEE, 0x0222, 0x00EE, 0x0620, 0x0842, 0x0240, 0x0460,
    0x006C, 0x0A4A, 0x088A, 0x04A0, 0x0888, 0x0000, 0x0000, 0x0000,
    /* PAL1: red ball */
    0x0000, 0x0004, 0x002A, 0x08AE, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* PAL2: green ball */
    0x0000, 0x0040, 0x02A2, 0x0AEA, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    /* PAL3: blue ball */
    0x0000, 0x0400, 0x0A42, 0x0EA8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

void GFX_loadPalettes(void)
{
    PAL_setColors(0, palettes, 64);
}

/* 16x16 ball: four tiles in sprite order (column-major: top-left,
 * bottom-left, top-right, bottom-right). Colour 1 rim, 2 body, 3 highlight. */
void GFX_loadBall(u16 index)
{
    vu32 *port = VDP_DATA_PORT32;
    u16 tx, ty, py, px;
    *VDP_CTRL_PORT32 = VDP_WRITE_VRAM(index * 32);
    for (tx = 0; tx < 2; tx++) {
        for (ty = 0; ty < 2; ty++) {
            for (py = 0; py < 8; py++) {
                u32 line = 0;
                for (px = 0; px < 8; px++) {
                    s16 dx = (s16)(2 * (tx * 8 + px)) - 15;
                    s16 dy = (s16)(2 * (ty * 8 + py)) - 15;
                    s16 hx = dx + 5, hy = dy + 5;
                    s16 r2 = dx * dx + dy * dy;
                    s16 h2 = hx * hx + hy * hy;
                    u16 c = 0;
                    if (r2 < 225) {
                        if (h2 < 40) c = 3;
                        else if (r2 < 150) c = 2;
                        else c = 1;
                    }
                    line = (line << 4) | c;
                }
                *port = line;
            }
        }
    }
}

/* Background tiles: a checker (colours 4/5) and diagonal stripes (6/7). */
void GFX_loadBackground(u16 index)
{
    vu32 *port = VDP_DATA_PORT32;
    u16 py, px;
    *VDP_CTRL_PORT32 = VDP_WRITE_VRAM(index * 32);
    for (py = 0; py < 8; py++) {
        u32 line = 0;
        for (px = 0; px < 8; px++)
            line = (line << 4) | ((((px >> 2) ^ (py >> 2)) & 1) ? 5 : 4);
        *port = line;
    }
    for (py = 0; py < 8; py++) {
        u32 line = 0;
        for (px = 0; px < 8; px++)
            line = (line << 4) | ((((px + py) >> 1) & 1) ? 7 : 6);
        *port = line;
    }
}
