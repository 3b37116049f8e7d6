/* retroprof known-costs test ROM (NTSC, H40).
 *
 * Phases of a fixed number of frames (VBlanks), each with a workload whose
 * cost is known by construction (figures in testroms/README.md):
 *   A   240  light load: 24 sprites moved each frame
 *   B   300  + k 32-bit divisions per sprite, k = 1 + one more every 30 frames
 *   B2  120  the same 10 steps per sprite with a reciprocal table and mulu.w
 *   C   132  plane B redrawn every 20th frame with 1,120 VDP_setTileMapXY calls
 *   C2  120  the same redraw with one VDP_fillTileMapRect call
 *   D   480  a ROM->VRAM DMA queued each frame, 4,096 bytes + 512 every 40 frames
 *   END      light load forever, results on screen
 * Every game loop calls burn() BURN_CALLS times and queues the 192-byte
 * sprite table. The ROM keeps its own account in RAM (symbols below). */
#include "genesis.h"
#include "gfx.h"

#define NUM_SPRITES 24
#define BURN_CALLS 1
#define DIV_STEP_FRAMES 30
#define DIV_MAX 10
#define REDRAW_FRAMES 20
#define DMA_STEP_FRAMES 40
#define DMA_START_BYTES 4096
#define DMA_STEP_BYTES 512

enum { PHASE_A, PHASE_B, PHASE_B2, PHASE_C, PHASE_C2, PHASE_D, PHASE_END, NUM_PHASES };

static const u16 phase_len[NUM_PHASES] = { 240, 300, 120, 132, 120, 480, 0 /* END: for ever */ };
static const char *const phase_title[NUM_PHASES] = {
    "PHASE A : LIGHT LOAD           ",
    "PHASE B : 32-BIT DIVISIONS     ",
    "PHASE B2: RECIPROCAL + MULU.W  ",
    "PHASE C : 1120 X SETTILEMAPXY  ",
    "PHASE C2: 1 X FILLTILEMAPRECT  ",
    "PHASE D : GROWING DMA QUEUE    ",
    "END: ALL PHASES DONE           ",
};
static const char *const phase_note[NUM_PHASES] = {
    "24 SPRITES MOVED EACH FRAME    ",
    "ONE MORE DIVISION EVERY 30 FR  ",
    "10 STEPS PER SPRITE, NO DIVIDE ",
    "PLANE B REDRAWN EVERY 20 FR    ",
    "PLANE B REDRAWN EVERY 20 FR    ",
    "4 KB + 512 B EVERY 40 FRAMES   ",
    "DROPPED FRAMES PER PHASE:      ",
};

/* ---- the ROM's own account, read by tests through symbol.txt ------------ */
vu32 loop_count;                      /* finished game loops */
vu16 phase;                           /* current phase (enum above) */
vu32 phase_frame;                     /* VBlanks since the phase started */
vu32 phase_start_vblank[NUM_PHASES];  /* vblank_count when the phase started */
vu32 phase_start_loop[NUM_PHASES];    /* loop_count when the phase started */
vu32 phase_dropped[NUM_PHASES];       /* VBlanks - loops, set when it ended */
vu16 phases_done;                     /* number of phases finished */
vu16 cpu_load;                        /* SYS_getCPULoad() of each loop */
vu32 burn_calls;                      /* burn() calls so far */
vu16 divs_per_sprite;                 /* phase B: divisions per sprite now */
vu32 div_calls;                       /* phase B: 32-bit divisions done */
vu32 mul_steps;                       /* phase B2: reciprocal steps done */
vu16 redraw_count;                    /* phase C/C2 redraws done */
vu32 settile_calls;                   /* VDP_setTileMapXY calls in phase C */
vu16 dma_step_bytes;                  /* phase D: blob bytes queued per frame */

/* Division operands (volatile: every division really happens). */
vs32 bdiv_dividend = 1234567;
vs32 bdiv_divisor = 7;
vu16 bdiv_dividend16 = 54321;
s32 bdiv_result[NUM_SPRITES];

/* 0xFFFF / d for d = 1..32 (index 0 unused). */
static const u16 recip_table[33] = {
    0, 65535, 32767, 21845, 16383, 13107, 10922, 9362, 8191, 7281, 6553,
    5957, 5461, 5041, 4681, 4369, 4095, 3855, 3640, 3449, 3276, 3120, 2978,
    2849, 2730, 2621, 2520, 2427, 2340, 2259, 2184, 2114, 2047,
};

extern const u8 dma_blob[];

typedef struct { s16 x, y, vx, vy; } Obj;
static Obj objs[NUM_SPRITES];

static NO_INLINE void init_sprites(void)
{
    u16 i, pal = 1;
    s16 y = 24;
    for (i = 0; i < NUM_SPRITES; i++) {
        Obj *o = &objs[i];
        VDPSprite *s = &vdpSpriteCache[i];
        o->x = (s16)(8 + i * 12);
        o->y = y;
        o->vx = (i & 1) ? -(s16)(1 + (i & 3)) : (s16)(1 + (i & 3));
        o->vy = (i & 2) ? -(s16)(1 + ((i >> 2) & 1)) : (s16)(1 + ((i >> 2) & 1));
        y += 37;
        if (y > 190) y -= 166;
        s->size_link = (SPRITE_SIZE(2, 2) << 8) | ((i + 1 < NUM_SPRITES) ? i + 1 : 0);
        s->attribut = TILE_ATTR(pal, 0, 0, 0, BALL_TILE);
        s->x = o->x + 128;
        s->y = o->y + 128;
        if (++pal > 3) pal = 1;
    }
}

/* Phase work inside the per-sprite loop:
 *   B : k calls of __divsi3 (which calls __udivsi3) per sprite
 *   B2: DIV_MAX reciprocal steps (one mulu.w each) per sprite */
static NO_INLINE void move_sprites(u16 ph, u16 k)
{
    u16 i, j;
    for (i = 0; i < NUM_SPRITES; i++) {
        Obj *o = &objs[i];
        VDPSprite *s = &vdpSpriteCache[i];

        o->x += o->vx;
        if (o->x < 0 || o->x > 320 - 16) { o->vx = -o->vx; o->x += o->vx; }
        o->y += o->vy;
        if (o->y < 0 || o->y > 224 - 16) { o->vy = -o->vy; o->y += o->vy; }

        if (ph == PHASE_B) {
            s32 acc = 0;
            for (j = 0; j < k; j++) acc += bdiv_dividend / bdiv_divisor;
            bdiv_result[i] = acc;
        } else if (ph == PHASE_B2) {
            s32 acc = 0;
            for (j = 0; j < k; j++)
                acc += ((u32)bdiv_dividend16 * recip_table[(u16)bdiv_divisor]) >> 16;
            bdiv_result[i] = acc;
        }

        s->x = o->x + 128;
        s->y = o->y + 128;
    }
}

static NO_INLINE void redraw_per_tile(u16 tile)
{
    u16 x, y;
    for (y = 0; y < 28; y++)
        for (x = 0; x < 40; x++) VDP_setTileMapXY(BG_B, tile, x, y);
}

static NO_INLINE void show_phase(u16 ph)
{
    VDP_drawText(phase_title[ph], 2, 3);
    VDP_drawText(phase_note[ph], 2, 4);
}

static NO_INLINE void show_results(void)
{
    static const char names[6][3] = { "A ", "B ", "B2", "C ", "C2", "D " };
    char line[12];
    u16 p, col = 0, row = 6;
    /* no division here: all __divsi3 calls of this ROM are phase B's */
    for (p = 0; p < PHASE_END; p++) {
        line[0] = names[p][0];
        line[1] = names[p][1];
        line[2] = ':';
        uintToStr(phase_dropped[p], line + 3, 4);
        VDP_drawText(line, 4 + col, row);
        col += 10;
        if (col == 30) { col = 0; row++; }
    }
}

int main(bool hard_reset)
{
    u16 k = 0, next_step = 0, bg = 0, results_shown = 0;
    (void)hard_reset;

    GFX_loadPalettes();
    VDP_loadFont(FONT_TILE);
    GFX_loadBall(BALL_TILE);
    GFX_loadBackground(BG_TILE);
    VDP_fillTileMapRect(BG_B, TILE_ATTR(0, 0, 0, 0, BG_TILE), 0, 0, 40, 28);
    VDP_drawText("RETROPROF KNOWN-COSTS TEST ROM", 2, 1);
    init_sprites();
    VDP_updateSprites(NUM_SPRITES);
    DMA_flushQueue();
    VDP_setEnable(TRUE);

    /* Start on a VBlank edge so phase A's first loop is a whole frame. */
    SYS_doVBlankProcess();
    phase = PHASE_A;
    phase_start_vblank[PHASE_A] = vblank_count;
    phase_start_loop[PHASE_A] = loop_count;
    show_phase(PHASE_A);

    for (;;) {
        u16 ph = phase;
        u32 f = vblank_count - phase_start_vblank[ph];

        if (ph < PHASE_END && f >= phase_len[ph]) {
            /* Close the phase: dropped = VBlanks - finished loops. */
            u32 vb = vblank_count;
            phase_dropped[ph] = (vb - phase_start_vblank[ph]) - (loop_count - phase_start_loop[ph]);
            phases_done = ph + 1;
            ph++;
            phase = ph;
            phase_start_vblank[ph] = vb;
            phase_start_loop[ph] = loop_count;
            f = 0;
            next_step = 0;
            show_phase(ph);
            if (ph == PHASE_B) k = 0;
            if (ph == PHASE_B2) { k = DIV_MAX; divs_per_sprite = 0; }
            if (ph == PHASE_C) next_step = REDRAW_FRAMES;
            if (ph == PHASE_C2) next_step = REDRAW_FRAMES;
            if (ph == PHASE_D) {
                u16 y;
                dma_step_bytes = DMA_START_BYTES - DMA_STEP_BYTES;
                for (y = 0; y < 28; y++)
                    VDP_fillTileMapRect(BG_B, TILE_ATTR(0, 0, 0, 0, BLOB_TILE + (y & 3)), 0, y, 40, 1);
            }
            if (ph == PHASE_END) dma_step_bytes = 0;
        }
        phase_frame = f;

        /* Results on screen two frames into END (not in the frame that also
         * flushes phase D's last 9.9 KB DMA). */
        if (ph == PHASE_END && f >= 2 && !results_shown) {
            show_results();
            results_shown = 1;
        }

        /* Step schedules (no division here: counters only). */
        if (ph == PHASE_B && f >= next_step) {
            k++;
            divs_per_sprite = k;
            next_step += DIV_STEP_FRAMES;
        }
        if ((ph == PHASE_C || ph == PHASE_C2) && f >= next_step) {
            u16 tile = TILE_ATTR(0, 0, 0, 0, BG_TILE + (bg ^= 1));
            if (ph == PHASE_C) {
                redraw_per_tile(tile);
                settile_calls += 40 * 28;
            } else {
                VDP_fillTileMapRect(BG_B, tile, 0, 0, 40, 28);
            }
            redraw_count++;
            next_step += REDRAW_FRAMES;
        }
        if (ph == PHASE_D && f >= next_step) {
            dma_step_bytes += DMA_STEP_BYTES;
            next_step += DMA_STEP_FRAMES;
        }

        /* Fixed cost: BURN_CALLS x burn() (5,038 cycles each by the tables). */
        burn();
        burn_calls += BURN_CALLS;

        move_sprites(ph, k);
        if (ph == PHASE_B) div_calls += (u32)k * NUM_SPRITES;
        if (ph == PHASE_B2) mul_steps += (u32)k * NUM_SPRITES;

        if (ph == PHASE_D) DMA_queueDma(DMA_VRAM, dma_blob, VRAM_DMA_DEST, dma_step_bytes >> 1, 2);
        VDP_updateSprites(NUM_SPRITES);

        cpu_load = SYS_getCPULoad();
        loop_count++;
        SYS_doVBlankProcess();
    }
    return 0;
}
