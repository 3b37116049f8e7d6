/* 3-button pad reading (plutiedev.com "Reading the controllers"): with TH
 * high the port reads ?1CBRLDU, with TH low ?0SA00DU; buttons are active low. */
#include "genesis.h"

vu16 joy_state[2];

void JOY_init(void)
{
    *IO_CTRL1 = 0x40;   /* TH is an output */
    *IO_CTRL2 = 0x40;
    *IO_DATA1 = 0x40;
    *IO_DATA2 = 0x40;
    joy_state[0] = 0;
    joy_state[1] = 0;
}

static u16 readPad3(vu8 *port)
{
    u8 hi, lo;
    *port = 0x40;
    __asm__ volatile("nop\n\tnop");
    hi = *port;                     /* ?1CBRLDU */
    *port = 0x00;
    __asm__ volatile("nop\n\tnop");
    lo = *port;                     /* ?0SA00DU */
    *port = 0x40;
    return (u16)(~((hi & 0x3F) | ((lo & 0x30) << 2)) & 0xFF);
}

void JOY_update(void)
{
    joy_state[0] = readPad3(IO_DATA1);
    joy_state[1] = readPad3(IO_DATA2);
}

u16 JOY_readJoypad(u16 joy)
{
    return joy_state[joy & 1];
}
