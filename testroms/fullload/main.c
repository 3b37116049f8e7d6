/* retroprof full-load test ROM (NTSC, H40).
 *
 * Keeps the 68000 busy for the whole of every frame, for measuring an
 * emulator's or a profiler's speed on a game at 100 % load on material we
 * own. The game loop runs work units until the VBlank counter moves, then
 * does its VBlank work at once (VDP_waitVBlank(FALSE) finds the VBlank
 * already there, so the idle function takes a few dozen cycles a frame).
 * A work unit is a realistic mix for a busy action game:
 *   - fixed-point math: 16.16 positions and velocities with gravity, a sine
 *     table scaled by muls.w, a 32-bit division (__divsi3) every 4 objects;
 *   - sprite table updates: 80 entries of the RAM sprite cache rewritten
 *     (position, flip by direction, link), the table DMA'd every VBlank;
 *   - memory copies: a 64-byte ROM -> RAM "decompression" copy (memcpy,
 *     byte by byte), a 64-byte RAM -> RAM long-word
 *     copy, and one 512-byte RAM -> VRAM tile DMA queued per frame;
 *   - a music driver's Z80 side: the Z80 runs its own program (z80_prog
 *     below) that reads one byte per ~240 T-states (about one per scanline,
 *     XGM's PCM rate) through the bank window from ROM 0x8000-0xFFFF, which
 *     stalls the 68000 on each read as on hardware.
 * The ROM keeps its own account in RAM (symbols below). */
#include "genesis.h"
#include "gfx.h"

#define NUM_OBJS 80
#define OBJS_PER_UNIT 4
#define COPY_BYTES 64
#define LCOPY_LONGS 16
#define TILE_DMA_BYTES 512

/* ---- the ROM's own account, read by tests through symbol.txt ------------ */
vu32 loop_count;      /* finished game loops (one per VBlank at full load) */
vu32 work_units;      /* work units done */
vu32 div_calls;       /* 32-bit divisions done */
vu32 math_sum;        /* running sum of the fixed-point results */
vu32 copy_sum;        /* running sum over the copied buffers */
vu16 cpu_load;        /* SYS_getCPULoad() of each loop */
vu16 z80_started;     /* 1 once the Z80 program runs */

/* Z80 program (hand-assembled; Zilog UM0080 encodings). Sets the 68000 bank
 * to 1 (ROM 0x8000-0xFFFF: nine writes to 0x6000, bit 0 first), then reads
 * the window byte by byte for ever, summing into Z80 RAM 0x1F00 and counting
 * 256-byte blocks at 0x1F01, with a delay loop between reads.
 *   0000 F3          di
 *   0001 31 00 20    ld sp,0x2000
 *   0004 21 00 60    ld hl,0x6000
 *   0007 3E 01       ld a,1
 *   0009 77          ld (hl),a          ; bank bit 0 = 1
 *   000A AF          xor a
 *   000B 77 x8       ld (hl),a          ; bank bits 1-8 = 0
 *   0013 11 00 80    loop: ld de,0x8000
 *   0016 06 00       ld b,0             ; 256 reads
 *   0018 1A          rd:  ld a,(de)     ; 68000 bus (bank window)
 *   0019 13          inc de
 *   001A 81          add a,c
 *   001B 4F          ld c,a
 *   001C 32 00 1F    ld (0x1F00),a
 *   001F 3E 0C       ld a,12
 *   0021 3D          dl:  dec a
 *   0022 20 FD       jr nz,dl
 *   0024 10 F2       djnz rd
 *   0026 21 01 1F    ld hl,0x1F01
 *   0029 34          inc (hl)
 *   002A 18 E7       jr loop */
static const u8 z80_prog[] = {
    0xF3, 0x31, 0x00, 0x20, 0x21, 0x00, 0x60, 0x3E, 0x01, 0x77, 0xAF,
    0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77, 0x77,
    0x11, 0x00, 0x80, 0x06, 0x00, 0x1A, 0x13, 0x81, 0x4F, 0x32, 0x00, 0x1F,
    0x3E, 0x0C, 0x3D, 0x20, 0xFD, 0x10, 0xF2, 0x21, 0x01, 0x1F, 0x34, 0x18, 0xE7,
};

/* sin(i * 2 pi / 64) * 256, i = 0..63. */
static const s16 sine[64] = {
    0, 25, 50, 74, 98, 121, 142, 162, 181, 198, 213, 226, 237, 245, 251, 255,
    256, 255, 251, 245, 237, 226, 213, 198, 181, 162, 142, 121, 98, 74, 50, 25,
    0, -25, -50, -74, -98, -121, -142, -162, -181, -198, -213, -226, -237, -245, -251, -255,
    -256, -255, -251, -245, -237, -226, -213, -198, -181, -162, -142, -121, -98, -74, -50, -25,
};

typedef struct {
    s32 x, y;       /* 16.16 */
    s32 vx, vy;     /* 16.16 per unit */
    u16 phase;      /* sine index */
    u16 amp;        /* wobble amplitude */
} Obj;
static Obj objs[NUM_OBJS];
static u16 next_obj;

static u8 unpack_buf[COPY_BYTES];
static u32 lbuf_a[LCOPY_LONGS];
static u32 lbuf_b[LCOPY_LONGS];
static u16 tile_buf[TILE_DMA_BYTES / 2];
static u16 copy_src;  /* offset of the next ROM copy inside the code */

#define Z80_BUSREQ ((vu16 *)0xA11100)
#define Z80_RESET  ((vu16 *)0xA11200)
#define Z80_RAM    ((vu8 *)0xA00000)

/* Load and start the Z80 program: take the bus (bounded wait), copy, pulse
 * reset, give the bus back (plutiedev "Using the Z80 from the 68000"). */
static NO_INLINE void z80_start(void)
{
    u16 i, n = 0x3FFF;
    *Z80_BUSREQ = 0x100;
    *Z80_RESET = 0x100;
    while ((*Z80_BUSREQ & 0x100) && n--) ;
    for (i = 0; i < sizeof(z80_prog); i++) Z80_RAM[i] = z80_prog[i];
    *Z80_RESET = 0;
    for (i = 0; i < 32; i++) __asm__ volatile("nop");
    *Z80_BUSREQ = 0;
    *Z80_RESET = 0x100;
    z80_started = 1;
}

static NO_INLINE void init_objs(void)
{
    u16 i, pal = 1;
    for (i = 0; i < NUM_OBJS; i++) {
        Obj *o = &objs[i];
        VDPSprite *s = &vdpSpriteCache[i];
        o->x = (s32)(8 + (i * 37) % 296) << 16;
        o->y = (s32)(8 + (i * 53) % 192) << 16;
        o->vx = ((s32)(i & 7) - 3) * 0x9000 + 0x1234;
        o->vy = -((s32)(i & 3) + 1) * 0x8000;
        o->phase = (i * 5) & 63;
        o->amp = 2 + (i & 7);
        s->size_link = (SPRITE_SIZE(2, 2) << 8) | ((i + 1 < NUM_OBJS) ? i + 1 : 0);
        s->attribut = TILE_ATTR(pal, 0, 0, 0, BALL_TILE);
        if (++pal > 3) pal = 1;
    }
}

/* Fixed-point motion and the sprite cache entry of objects [first, first+n). */
static NO_INLINE void move_objs(u16 first, u16 n)
{
    u16 i;
    for (i = first; i < first + n; i++) {
        Obj *o = &objs[i];
        VDPSprite *s = &vdpSpriteCache[i];
        s16 wob;
        o->vy += 0x0800;                        /* gravity */
        o->x += o->vx;
        o->y += o->vy;
        if (o->x < 0 || o->x > ((s32)(320 - 16) << 16)) { o->vx = -o->vx; o->x += o->vx; }
        if (o->y > ((s32)(224 - 16) << 16)) {
            o->y = (s32)(224 - 16) << 16;
            o->vy = -o->vy + (o->vy >> 3);      /* bounce, losing 1/8 */
        }
        if (o->y < 0) { o->y = 0; o->vy = 0x10000; }
        o->phase = (o->phase + 1) & 63;
        wob = (s16)(((s32)sine[o->phase] * (s16)o->amp) >> 8);   /* muls.w */
        if ((i & 3) == 0) {
            /* distance-scaled speed: one 32-bit division */
            s32 d = (o->x >> 8) + (o->y >> 8) + 1;
            math_sum += (u32)((s32)0x7FFFFFF / d);
            div_calls++;
        }
        math_sum += (u32)wob;
        s->x = (s16)((o->x >> 16) + wob + 128);
        s->y = (s16)((o->y >> 16) + 128);
        s->attribut = (s->attribut & ~0x0800) | (o->vx < 0 ? 0x0800 : 0);
    }
}

/* The copies of one unit: ROM -> RAM bytes, RAM -> RAM longs, a tile row. */
static NO_INLINE void copy_work(void)
{
    extern const u8 _Vectors[];
    u16 i;
    u32 sum = 0;
    memcpy(unpack_buf, _Vectors + copy_src, COPY_BYTES);
    copy_src = (copy_src + COPY_BYTES) & 0x3FFF;
    {
        const u32 *src = (const u32 *)unpack_buf;
        u32 *a = lbuf_a, *b = lbuf_b;
        for (i = 0; i < LCOPY_LONGS; i++) *a++ = *src++;
        a = lbuf_a;
        for (i = 0; i < LCOPY_LONGS; i++) { u32 v = *a++; *b++ = v; sum += v; }
    }
    for (i = 0; i < TILE_DMA_BYTES / 2; i += 8) tile_buf[i] = (u16)(tile_buf[i] + sum);
    copy_sum += sum;
}

static NO_INLINE void work_unit(void)
{
    move_objs(next_obj, OBJS_PER_UNIT);
    next_obj += OBJS_PER_UNIT;
    if (next_obj >= NUM_OBJS) next_obj = 0;
    copy_work();
    work_units++;
}

int main(bool hard_reset)
{
    (void)hard_reset;
    GFX_loadPalettes();
    VDP_loadFont(FONT_TILE);
    GFX_loadBall(BALL_TILE);
    GFX_loadBackground(BG_TILE);
    VDP_fillTileMapRect(BG_B, TILE_ATTR(0, 0, 0, 0, BG_TILE), 0, 0, 40, 28);
    VDP_drawText("RETROPROF FULL-LOAD TEST ROM", 2, 1);
    VDP_drawText("68000 BUSY 100 PERCENT OF EACH FRAME", 2, 3);
    init_objs();
    VDP_updateSprites(NUM_OBJS);
    DMA_flushQueue();
    z80_start();
    VDP_setEnable(TRUE);
    SYS_doVBlankProcess();

    for (;;) {
        u32 v = vblank_count;
        do work_unit(); while (vblank_count == v);
        /* VBlank work at once: the wait finds the VBlank already there. */
        VDP_updateSprites(NUM_OBJS);
        DMA_queueDma(DMA_VRAM, tile_buf, 0x8000, TILE_DMA_BYTES / 2, 2);
        dma_queued_bytes = DMA_getQueueTransferSize();
        VDP_waitVBlank(FALSE);
        DMA_flushQueue();
        JOY_update();
        cpu_load = SYS_getCPULoad();
        loop_count++;
    }
    return 0;
}
