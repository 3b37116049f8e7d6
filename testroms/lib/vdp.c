/* VDP part of the runtime. Register values: plutiedev.com "VDP registers"
 * (H40, NTSC, 64x32 planes at SGDK's default VRAM addresses). */
#include "genesis.h"

VDPSprite vdpSpriteCache[MAX_VDP_SPRITE];

/* VRAM write commands for the start of each plane. Every plane (64x32 cells,
 * 4 KB) lies inside one 16 KB VRAM quarter, so adding (offset << 16) to the
 * command gives the command for any cell of the plane. */
static const u32 plane_cmd[3] = {
    VDP_WRITE_VRAM(VRAM_PLANE_A), VDP_WRITE_VRAM(VRAM_PLANE_B), VDP_WRITE_VRAM(VRAM_WINDOW)
};

static const u16 vdp_init_regs[24] = {
    0x8004, /* 0: no HINT, normal colour */
    0x8134, /* 1: display off (on later), VINT on, DMA on, mode 5 */
    0x8230, /* 2: plane A at 0xC000 */
    0x832C, /* 3: window at 0xB000 */
    0x8407, /* 4: plane B at 0xE000 */
    0x857C, /* 5: sprite table at 0xF800 */
    0x8600,
    0x8700, /* 7: backdrop = palette 0 colour 0 */
    0x8800, 0x8900,
    0x8AFF, /* 10: HINT counter */
    0x8B00, /* 11: full-screen scroll, no external interrupt */
    0x8C81, /* 12: H40 (320 px), no interlace */
    0x8D3F, /* 13: H scroll table at 0xFC00 */
    0x8E00,
    0x8F02, /* 15: auto-increment 2 */
    0x9001, /* 16: planes 64x32 cells */
    0x9100, 0x9200, /* window off */
    0x9300, 0x9400, 0x9500, 0x9600, 0x9700,
};

void VDP_init(void)
{
    vu16 *ctrl = VDP_CTRL_PORT;
    vu32 *data32 = VDP_DATA_PORT32;
    u16 i, guard;

    /* Reading the status resets the control-port latch; wait (bounded) for
     * any DMA left running by a soft reset. */
    guard = 0xFFFF;
    while ((*ctrl & VDP_DMABUSY_FLAG) && --guard) ;

    for (i = 0; i < 24; i++) *ctrl = vdp_init_regs[i];

    /* Clear VRAM, CRAM and VSRAM with CPU writes. */
    *VDP_CTRL_PORT32 = VDP_WRITE_VRAM(0);
    for (i = 0; i < 0x4000; i++) *data32 = 0;
    *VDP_CTRL_PORT32 = VDP_WRITE_CRAM(0);
    for (i = 0; i < 32; i++) *data32 = 0;
    *VDP_CTRL_PORT32 = VDP_WRITE_VSRAM(0);
    for (i = 0; i < 20; i++) *data32 = 0;
}

void VDP_setEnable(bool on)
{
    *VDP_CTRL_PORT = on ? 0x8174 : 0x8134;
}

/* The idle wait, as SGDK's: note the V-counter and the VBlank flag, with
 * forceNext wait for the end of a VBlank we are already in, record the frame
 * load through a call to addFrameLoad() (a call out of the idle function),
 * then busy-poll the VDP status until the VBlank flag is set. */
NO_INLINE bool VDP_waitVBlank(bool forceNext)
{
    vu16 *pw = VDP_CTRL_PORT;
    const u32 t = vblank_count;
    const u16 vcnt = *VDP_HVCOUNTER >> 8;
    const u16 blank = *pw & VDP_VBLANK_FLAG;
    u16 load;

    if (forceNext && blank) {
        while (*pw & VDP_VBLANK_FLAG) ;
    }

    /* SGDK's adjusted V-counter: +32 lines, or 16 when already in VBlank. */
    if ((blank && vcnt >= 0xDF) || vcnt >= 224) load = 16;
    else load = vcnt + 32;
    bool late = addFrameLoad(load, t);

    while (!(*pw & VDP_VBLANK_FLAG)) ;
    return late;
}

/* One tile: set the VRAM address (a long write to the control port), then
 * write one word. x < 64, y < 32. */
void VDP_setTileMapXY(VDPPlane plane, u16 tile, u16 x, u16 y)
{
    u16 offset = (x + (y << PLANE_WIDTH_SHIFT)) << 1;
    *VDP_CTRL_PORT32 = plane_cmd[plane] + ((u32)offset << 16);
    *VDP_DATA_PORT = tile;
}

/* A w x h rectangle of one tile value: one address command per row. */
void VDP_fillTileMapRect(VDPPlane plane, u16 tile, u16 x, u16 y, u16 w, u16 h)
{
    vu32 *ctrl = VDP_CTRL_PORT32;
    vu16 *data = VDP_DATA_PORT;
    u32 cmd = plane_cmd[plane] + ((u32)((x + (y << PLANE_WIDTH_SHIFT)) << 1) << 16);

    while (h--) {
        u16 i = w;
        *ctrl = cmd;
        while (i--) *data = tile;
        cmd += (u32)(2 << PLANE_WIDTH_SHIFT) << 16;
    }
}

void VDP_clearPlane(VDPPlane plane)
{
    VDP_fillTileMapRect(plane, 0, 0, 0, 64, 32);
}

void VDP_loadTileData(const u32 *data, u16 index, u16 num)
{
    vu32 *port = VDP_DATA_PORT32;
    u16 n = num * 8;
    *VDP_CTRL_PORT32 = VDP_WRITE_VRAM(index * 32);
    while (n--) *port = *data++;
}

void PAL_setColors(u16 index, const u16 *colors, u16 count)
{
    vu16 *port = VDP_DATA_PORT;
    *VDP_CTRL_PORT32 = VDP_WRITE_CRAM(index * 2);
    while (count--) *port = *colors++;
}

/* ---- text ---------------------------------------------------------------- */

/* Our own 5x7 font, drawn for these ROMs: 7 rows of 5 pixels per glyph,
 * '#' = ink. ASCII 32..95; lower case is drawn with the upper-case glyphs. */
#define GLYPHS 64
static const char *const glyphs[GLYPHS] = {
    /* ' ' */ "..................................." ,
    /* '!' */ "..#....#....#....#....#.........#..",
    /* '"' */ ".#.#..#.#..........................",
    /* '#' */ ".#.#.#####.#.#..#.#.#####.#.#......",
    /* '$' */ "..#...####.#.#..###...#.#.####...#.",
    /* '%' */ "##...##..#...#...#...#...#..##...##",
    /* '&' */ ".##..#..#..##...##.#.#..#..##.#....",
    /* ''' */ "..#....#...#.......................",
    /* '(' */ "...#...#...#....#....#.....#.....#.",
    /* ')' */ ".#.....#.....#....#....#...#...#...",
    /* '*' */ ".......#..#.#.#.###.#.#.#..#.......",
    /* '+' */ ".......#....#..#####..#....#.......",
    /* ',' */ "....................##....#...#....",
    /* '-' */ "...............#####...............",
    /* '.' */ ".........................##...##...",
    /* '/' */ ".........#...#...#...#...#.........",
    /* '0' */ ".###.#...##..###.#.###..##...#.###.",
    /* '1' */ "..#...##....#....#....#....#...###.",
    /* '2' */ ".###.#...#....#...#...#...#...#####",
    /* '3' */ "#####...#...#.....#.....##...#.###.",
    /* '4' */ "...#...##..#.#.#..#.#####...#....#.",
    /* '5' */ "######....####.....#....##...#.###.",
    /* '6' */ "..##..#...#....####.#...##...#.###.",
    /* '7' */ "#####....#...#...#...#....#....#...",
    /* '8' */ ".###.#...##...#.###.#...##...#.###.",
    /* '9' */ ".###.#...##...#.####....#...#..##..",
    /* ':' */ "......##...##.........##...##......",
    /* ';' */ "......##...##........##....#...#...",
    /* '<' */ "...#...#...#...#.....#.....#.....#.",
    /* '=' */ "..........#####.....#####..........",
    /* '>' */ ".#.....#.....#.....#...#...#...#...",
    /* '?' */ ".###.#...#....#...#...#.........#..",
    /* '@' */ ".###.#...##.#.##.###.#....#.....###",
    /* 'A' */ ".###.#...##...#######...##...##...#",
    /* 'B' */ "####.#...##...#####.#...##...#####.",
    /* 'C' */ ".###.#...##....#....#....#...#.###.",
    /* 'D' */ "###..#..#.#...##...##...##..#.###..",
    /* 'E' */ "######....#....####.#....#....#####",
    /* 'F' */ "######....#....####.#....#....#....",
    /* 'G' */ ".###.#...##....#.####...##...#.####",
    /* 'H' */ "#...##...##...#######...##...##...#",
    /* 'I' */ ".###...#....#....#....#....#...###.",
    /* 'J' */ "..###...#....#....#....#.#..#..##..",
    /* 'K' */ "#...##..#.#.#..##...#.#..#..#.#...#",
    /* 'L' */ "#....#....#....#....#....#....#####",
    /* 'M' */ "#...###.###.#.##.#.##...##...##...#",
    /* 'N' */ "#...##...###..##.#.##..###...##...#",
    /* 'O' */ ".###.#...##...##...##...##...#.###.",
    /* 'P' */ "####.#...##...#####.#....#....#....",
    /* 'Q' */ ".###.#...##...##...##.#.##..#..##.#",
    /* 'R' */ "####.#...##...#####.#.#..#..#.#...#",
    /* 'S' */ ".#####....#.....###.....#....#####.",
    /* 'T' */ "#####..#....#....#....#....#....#..",
    /* 'U' */ "#...##...##...##...##...##...#.###.",
    /* 'V' */ "#...##...##...##...##...#.#.#...#..",
    /* 'W' */ "#...##...##...##.#.##.#.##.#.#.#.#.",
    /* 'X' */ "#...##...#.#.#...#...#.#.#...##...#",
    /* 'Y' */ "#...##...#.#.#...#....#....#....#..",
    /* 'Z' */ "#####....#...#...#...#...#....#####",
    /* '[' */ ".###..#....#....#....#....#....###.",
    /* '\' */ "....#.....#.....#.....#.....#......",
    /* ']' */ ".###....#....#....#....#....#..###.",
    /* '^' */ "..#...#.#.#...#....................",
    /* '_' */ "..............................#####",
};

#define FONT_INDEX 16         /* first font tile; tile = FONT_INDEX + c - 32 */
#define FONT_INK 1            /* palette 0 colour 1 */
#define FONT_SHADOW 2         /* palette 0 colour 2, one pixel down-right */
#define FONT_PAPER 13         /* palette 0 colour 13: opaque black behind text */

/* Expand the glyphs into 4bpp tiles (ink at columns 1..5, rows 0..6, with a
 * shadow one pixel down and right, on opaque paper so text stays readable
 * over the background). Runs once at start-up. */
u16 VDP_loadFont(u16 index)
{
    vu32 *port = VDP_DATA_PORT32;
    u16 g, row, col;

    *VDP_CTRL_PORT32 = VDP_WRITE_VRAM(index * 32);
    for (g = 0; g < GLYPHS; g++) {
        const char *p = glyphs[g];
        u8 bits[9];
        for (row = 0; row < 9; row++) bits[row] = 0;
        for (row = 0; row < 7; row++) {
            for (col = 0; col < 5; col++) {
                if (p[row * 5 + col] == '#') bits[row + 1] |= (u8)(0x40 >> col);
            }
        }
        for (row = 0; row < 8; row++) {
            u8 ink = bits[row + 1];
            u8 shadow = (u8)((bits[row] >> 1) & ~ink);
            u32 line = 0;
            for (col = 0; col < 8; col++) {
                line <<= 4;
                if (ink & (0x80 >> col)) line |= FONT_INK;
                else if (shadow & (0x80 >> col)) line |= FONT_SHADOW;
                else line |= FONT_PAPER;
            }
            *port = line;
        }
    }
    return GLYPHS;
}

void VDP_drawText(const char *str, u16 x, u16 y)
{
    vu16 *data = VDP_DATA_PORT;
    *VDP_CTRL_PORT32 = plane_cmd[BG_A] + ((u32)((x + (y << PLANE_WIDTH_SHIFT)) << 1) << 16);
    while (*str) {
        u8 c = (u8)*str++;
        if (c >= 'a' && c <= 'z') c -= 32;
        if (c < 32 || c >= 32 + GLYPHS) c = '?';
        *data = TILE_ATTR(0, 1, 0, 0, FONT_INDEX + c - 32);
    }
}

void VDP_clearText(u16 x, u16 y, u16 w)
{
    VDP_fillTileMapRect(BG_A, 0, x, y, w, 1);
}

/* Queue the DMA of the first num entries of the sprite cache (8 bytes each)
 * to the sprite attribute table, sent at the next VBlank. */
void VDP_updateSprites(u16 num)
{
    DMA_queueDma(DMA_VRAM, vdpSpriteCache, VRAM_SPRITES, num * 4, 2);
}
