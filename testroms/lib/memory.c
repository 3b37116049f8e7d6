/* Heap with SGDK's layout (our own code): the heap runs from _bend (end of
 * .bss) to MEMORY_HIGH = top of RAM - 0xA00 (SGDK's STACK_SIZE). Every block
 * starts with a u16 header = block size in bytes including the header (even);
 * bit 0 set = used. A 0 header ends the heap. MEM_alloc is NO_INLINE so a tool
 * can hook its entry (size at 6(sp)) and its return (pointer in d0). */
#include "genesis.h"

#define USED 1
#define STACK_SIZE 0x0A00
#define MEMORY_HIGH (0x01000000UL - STACK_SIZE)

extern u8 _bend[];

static u16 *heap;
static u16 *freep;     /* search start: the block after the last allocation */

void MEM_init(void)
{
    u32 h = ((u32)_bend + 1) & ~1UL;
    u32 len = MEMORY_HIGH - (h + 2);
    heap = (u16 *)h;
    heap[0] = (u16)len;
    heap[len >> 1] = 0;
    freep = heap;
}

/* Merge runs of free blocks from the start of the heap; return the first
 * merged free block of at least nsize bytes, or NULL. */
static u16 *pack(u16 nsize)
{
    u16 *b = heap;
    u16 *run = NULL;
    u16 runsize = 0;
    u16 bsize;

    while ((bsize = *b) != 0) {
        if (bsize & USED) {
            if (run) {
                *run = runsize;
                if (runsize >= nsize) return run;
                run = NULL;
            }
            b += bsize >> 1;
        } else {
            if (!run) {
                run = b;
                runsize = 0;
            }
            runsize += bsize;
            b += bsize >> 1;
        }
    }
    if (run) {
        *run = runsize;
        if (runsize >= nsize) return run;
    }
    return NULL;
}

NO_INLINE void *MEM_alloc(u16 size)
{
    u16 adj, remaining;
    u16 *p;

    if (size == 0) return NULL;
    adj = (size + 3) & 0xFFFE;           /* header + size, rounded to even */

    p = freep;
    if ((*p & USED) || adj > *p) {
        p = pack(adj);
        if (p == NULL) return NULL;
    }
    remaining = *p - adj;
    freep = p + (adj >> 1);
    if (remaining) {
        *freep = remaining;             /* split: the rest stays free */
    } else {
        u16 b;
        while ((b = *freep) & USED) freep += b >> 1;
    }
    *p = adj | USED;
    return p + 1;
}

void MEM_free(void *ptr)
{
    if (ptr) ((u16 *)ptr)[-1] &= ~USED;
}

u16 MEM_getFree(void)
{
    u16 *b = heap;
    u16 s, res = 0;
    while ((s = *b) != 0) {
        if (!(s & USED)) res += s;
        b += s >> 1;
    }
    return res;
}

u16 MEM_getAllocated(void)
{
    u16 *b = heap;
    u16 s, res = 0;
    while ((s = *b) != 0) {
        if (s & USED) res += s & ~USED;
        b += s >> 1;
    }
    return res;
}
