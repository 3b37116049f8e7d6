/* Basic types and attributes of the retroprof test-ROM runtime.
 * Names follow SGDK (MIT) so that a profiler sees the same API names;
 * the code is our own. */
#ifndef RP_TYPES_H
#define RP_TYPES_H

typedef unsigned char u8;
typedef signed char s8;
typedef unsigned short u16;
typedef signed short s16;
typedef unsigned long u32;
typedef signed long s32;
typedef volatile u8 vu8;
typedef volatile u16 vu16;
typedef volatile u32 vu32;
typedef volatile s16 vs16;
typedef volatile s32 vs32;
typedef u16 bool;

#define TRUE 1
#define FALSE 0
#define NULL ((void *)0)

#define NO_INLINE __attribute__((noinline))
#define USED_SYM __attribute__((used))

/* Provided by the runtime (gcc may emit calls to these). */
void *memcpy(void *to, const void *from, unsigned long len);
void *memset(void *to, int value, unsigned long len);

#endif
