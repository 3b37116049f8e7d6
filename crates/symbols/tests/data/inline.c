/* Test input for retroprof-symbols: a tiny freestanding 68000 program with
 * inlined functions. Rebuild with ./build.sh (needs m68k-linux-gnu-gcc). */
volatile unsigned short *const vdp_ctrl = (unsigned short *)0xC00004;
unsigned short counter;
unsigned short table[16];

static inline __attribute__((always_inline)) unsigned short read_status(void)
{
    return *vdp_ctrl;
}

static inline __attribute__((always_inline)) void wait_vblank(void)
{
    while (!(read_status() & 8))
        counter++;
}

static inline __attribute__((always_inline)) void fill(unsigned short v)
{
    for (int i = 0; i < 16; i++)
        table[i] = v + i;
}

__attribute__((noinline)) void game_step(unsigned short v)
{
    fill(v);
    wait_vblank();
}

__attribute__((noinline)) int sum(void)
{
    int s = 0;
    for (int i = 0; i < 16; i++)
        s += table[i];
    return s;
}

void _start(void)
{
    unsigned short v = 0;
    for (;;) {
        game_step(v++);
        if (sum() == 1234)
            wait_vblank();
    }
}
