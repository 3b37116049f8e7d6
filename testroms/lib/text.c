/* Number formatting for on-screen text. Uses 32-bit division and modulo,
 * so it goes through __udivsi3 / __umodsi3 (lib/libgcc.s). */
#include "genesis.h"

void uintToStr(u32 value, char *str, u16 minsize)
{
    char tmp[11];
    u16 n = 0;
    do {
        tmp[n++] = (char)('0' + (value % 10));
        value /= 10;
    } while (value && n < 10);
    while (n < minsize && n < 10) tmp[n++] = ' ';
    while (n) *str++ = tmp[--n];
    *str = 0;
}
