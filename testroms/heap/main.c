/* retroprof heap test ROM: MEM_alloc / MEM_free from distinct call sites with
 * known sizes, some blocks leaked on purpose, and the ROM's own account in
 * RAM so a tool that hooks MEM_alloc / MEM_free can be checked against it.
 *
 * Schedule (one game loop per frame; heap_frame = loops done, 0..599):
 *   start      init_tables: MEM_alloc(1000) kept for ever, MEM_alloc(300)
 *              freed at once (free site: init_tables)
 *   every loop spawn_bullet: MEM_alloc(24) into a ring of 8; a reused slot is
 *              freed first by despawn_bullet
 *   f % 60 == 0 load_chunk: unload_chunk frees the previous chunk, then
 *              MEM_alloc(512)
 *   f % 10 == 0 spawn_particle: MEM_alloc(10); particle n (0-based) with
 *              n % 3 == 2 is LEAKED (pointer dropped), the others go into a
 *              ring of 4 whose reused slot is freed by kill_particle
 *   f == 600   level_end frees every bullet, the chunk and the particle ring;
 *              then the ROM idles with the totals on screen.
 * Expected totals (README.md): 672 allocations, 651 frees, 21 live blocks
 * (the 1000-byte table + 20 leaked 10-byte particles = 1,200 bytes
 * requested, 1,242 heap bytes with headers), 20 leaked blocks / 200 bytes. */
#include "genesis.h"
#include "gfx.h"

#define HEAP_FRAMES 600
#define BULLETS 8
#define PARTICLES 4

enum { SITE_TABLES, SITE_TEMP, SITE_BULLET, SITE_CHUNK, SITE_PARTICLE, SITES };

/* ---- the ROM's own account (global symbols, see symbol.txt) ------------- */
vu32 loop_count;                 /* finished game loops */
vu32 heap_frame;                 /* workload frame (loops), stops at 600 */
vu16 heap_done;                  /* 1 once level_end ran */
vu32 heap_allocs;                /* successful MEM_alloc calls */
vu32 heap_frees;                 /* MEM_free calls (non-NULL) */
vu32 heap_failed;                /* MEM_alloc calls that returned NULL */
vu32 heap_alloc_bytes;           /* sum of requested sizes allocated */
vu32 heap_freed_bytes;           /* sum of requested sizes freed */
vu32 heap_live_bytes;            /* requested bytes still allocated */
vu32 heap_live_blocks;           /* blocks still allocated */
vu32 heap_peak_live_bytes;       /* maximum of heap_live_bytes */
vu32 heap_leaked_bytes;          /* requested bytes whose pointer was dropped */
vu32 heap_leaked_blocks;
vu32 heap_site_allocs[SITES];    /* per allocation site */
vu32 heap_site_live_bytes[SITES];
vu16 heap_mem_allocated;         /* MEM_getAllocated(): heap walk, headers incl. */
vu16 heap_mem_free;              /* MEM_getFree() */

static void *table;
static void *bullets[BULLETS];
static void *chunk;
static void *particles[PARTICLES];
static u16 bullet_next, particle_next, particle_count;

static void *tracked_alloc(u16 site, u16 size, void *p)
{
    if (!p) {
        heap_failed++;
        return p;
    }
    heap_allocs++;
    heap_alloc_bytes += size;
    heap_live_bytes += size;
    heap_live_blocks++;
    if (heap_live_bytes > heap_peak_live_bytes) heap_peak_live_bytes = heap_live_bytes;
    heap_site_allocs[site]++;
    heap_site_live_bytes[site] += size;
    return p;
}

static void tracked_free(u16 site, u16 size)
{
    heap_frees++;
    heap_freed_bytes += size;
    heap_live_bytes -= size;
    heap_live_blocks--;
    heap_site_live_bytes[site] -= size;
}

static NO_INLINE void init_tables(void)
{
    void *tmp;
    table = tracked_alloc(SITE_TABLES, 1000, MEM_alloc(1000));
    tmp = tracked_alloc(SITE_TEMP, 300, MEM_alloc(300));
    if (tmp) {
        MEM_free(tmp);
        tracked_free(SITE_TEMP, 300);
    }
}

static NO_INLINE void despawn_bullet(u16 slot)
{
    if (bullets[slot]) {
        MEM_free(bullets[slot]);
        tracked_free(SITE_BULLET, 24);
        bullets[slot] = NULL;
    }
}

static NO_INLINE void spawn_bullet(void)
{
    despawn_bullet(bullet_next);
    bullets[bullet_next] = tracked_alloc(SITE_BULLET, 24, MEM_alloc(24));
    bullet_next = (bullet_next + 1) & (BULLETS - 1);
}

static NO_INLINE void unload_chunk(void)
{
    if (chunk) {
        MEM_free(chunk);
        tracked_free(SITE_CHUNK, 512);
        chunk = NULL;
    }
}

static NO_INLINE void load_chunk(void)
{
    unload_chunk();
    chunk = tracked_alloc(SITE_CHUNK, 512, MEM_alloc(512));
}

static NO_INLINE void kill_particle(u16 slot)
{
    if (particles[slot]) {
        MEM_free(particles[slot]);
        tracked_free(SITE_PARTICLE, 10);
        particles[slot] = NULL;
    }
}

static NO_INLINE void spawn_particle(void)
{
    void *p = tracked_alloc(SITE_PARTICLE, 10, MEM_alloc(10));
    u16 n = particle_count++;
    /* n % 3 without a division: count in a 0,1,2 cycle */
    static u16 mod3;
    u16 leak = (mod3 == 2);
    if (++mod3 == 3) mod3 = 0;
    (void)n;
    if (!p) return;
    if (leak) {
        heap_leaked_bytes += 10;   /* pointer dropped on purpose */
        heap_leaked_blocks++;
        return;
    }
    kill_particle(particle_next);
    particles[particle_next] = p;
    particle_next = (particle_next + 1) & (PARTICLES - 1);
}

static NO_INLINE void level_end(void)
{
    u16 i;
    for (i = 0; i < BULLETS; i++) despawn_bullet(i);
    unload_chunk();
    for (i = 0; i < PARTICLES; i++) kill_particle(i);
    heap_done = 1;
}

static void show_value(const char *label, u32 value, u16 y)
{
    char num[12];
    VDP_drawText(label, 2, y);
    uintToStr(value, num, 6);
    VDP_drawText(num, 22, y);
}

/* One line of the on-screen totals per frame, round robin (keeps the loop
 * well inside a frame: each number costs a few 32-bit divisions). */
static NO_INLINE void show_stats(u16 line)
{
    switch (line) {
    case 0: show_value("ALLOCATIONS", heap_allocs, 5); break;
    case 1: show_value("FREES", heap_frees, 6); break;
    case 2: show_value("LIVE BLOCKS", heap_live_blocks, 7); break;
    case 3: show_value("LIVE BYTES", heap_live_bytes, 8); break;
    case 4: show_value("PEAK LIVE BYTES", heap_peak_live_bytes, 9); break;
    case 5: show_value("LEAKED BLOCKS", heap_leaked_blocks, 10); break;
    case 6: show_value("LEAKED BYTES", heap_leaked_bytes, 11); break;
    case 7: show_value("HEAP USED (WALK)", heap_mem_allocated, 12); break;
    default: show_value("FRAME", heap_frame, 14); break;
    }
}

int main(bool hard_reset)
{
    u16 chunk_timer = 0, particle_timer = 0, stat_line = 0;
    (void)hard_reset;

    GFX_loadPalettes();
    VDP_loadFont(FONT_TILE);
    GFX_loadBackground(BG_TILE);
    VDP_fillTileMapRect(BG_B, TILE_ATTR(0, 0, 0, 0, BG_TILE), 0, 0, 40, 28);
    VDP_drawText("RETROPROF HEAP TEST ROM", 2, 1);
    VDP_drawText("MEM_ALLOC / MEM_FREE, 5 SITES", 2, 3);
    VDP_setEnable(TRUE);
    SYS_doVBlankProcess();

    init_tables();
    for (;;) {
        if (!heap_done) {
            if (heap_frame < HEAP_FRAMES) {
                spawn_bullet();
                if (chunk_timer == 0) load_chunk();
                if (particle_timer == 0) spawn_particle();
                if (++chunk_timer == 60) chunk_timer = 0;
                if (++particle_timer == 10) particle_timer = 0;
                heap_frame++;
            } else {
                level_end();
                /* Walk the heap once at the end (long when fragmented). */
                heap_mem_allocated = MEM_getAllocated();
                heap_mem_free = MEM_getFree();
            }
        }
        show_stats(stat_line);
        if (++stat_line == 9) stat_line = 0;
        loop_count++;
        SYS_doVBlankProcess();
    }
    return 0;
}
