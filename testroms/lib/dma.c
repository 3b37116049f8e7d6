/* DMA queue: transfers are queued during the game loop and sent by
 * DMA_flushQueue() from SYS_doVBlankProcess() at the next VBlank, as in SGDK.
 * No transfer cap (SGDK's DMA_setMaxTransferSize(0)). Register layout:
 * plutiedev.com "DMA" (regs 19-20 length in words, 21-23 source >> 1,
 * 15 auto-increment, then the command with CD5 set starts the transfer). */
#include "genesis.h"

#define DMA_QUEUE_SIZE 80

typedef struct {
    u32 regLen;      /* 0x94LL 0x93LL */
    u32 regStepSrcL; /* 0x8FSS 0x95LL */
    u32 regSrcMH;    /* 0x96MM 0x97HH */
    u32 cmd;         /* control-port command, CD5 set */
} DMAOpInfo;

static DMAOpInfo dmaQueue[DMA_QUEUE_SIZE];
static u16 queueIndex;
static u32 queueBytes;

vu32 dma_queued_bytes;
vu32 dma_flushed_bytes;
vu32 dma_total_bytes;

bool DMA_queueDma(DMAType location, const void *from, u16 to, u16 len, u16 step)
{
    u32 src = (u32)from;
    /* The VDP does not carry from source bit 16 into bit 17 (plutiedev:
     * "DMA can't cross a 128 KB boundary"): split the transfer there. */
    u32 wordsLeft = (0x20000 - (src & 0x1FFFF)) >> 1;
    if (len > wordsLeft) {
        u16 first = (u16)wordsLeft;
        if (!DMA_queueDma(location, from, to, first, step)) return FALSE;
        src += (u32)first * 2;
        to += first * step;
        len -= first;
    }
    if (queueIndex >= DMA_QUEUE_SIZE) return FALSE;

    DMAOpInfo *info = &dmaQueue[queueIndex++];
    u32 s = (src >> 1) & 0x7FFFFF;
    info->regLen = ((u32)(0x9400 | (len >> 8)) << 16) | (0x9300 | (len & 0xFF));
    info->regStepSrcL = ((u32)(0x8F00 | (step & 0xFF)) << 16) | (0x9500 | (s & 0xFF));
    info->regSrcMH = ((u32)(0x9600 | ((s >> 8) & 0xFF)) << 16) | (0x9700 | ((s >> 16) & 0x7F));
    if (location == DMA_CRAM) info->cmd = VDP_DMA_CRAM(to);
    else if (location == DMA_VSRAM) info->cmd = VDP_DMA_VSRAM(to);
    else info->cmd = VDP_DMA_VRAM(to);
    queueBytes += (u32)len * 2;
    return TRUE;
}

/* Send every queued transfer now. A 68000-to-VDP DMA freezes the CPU until it
 * ends; past the end of VBlank it continues during active display. */
void DMA_flushQueue(void)
{
    vu32 *ctrl = VDP_CTRL_PORT32;
    const DMAOpInfo *info = dmaQueue;
    u16 n = queueIndex;

    while (n--) {
        *ctrl = info->regLen;
        *ctrl = info->regStepSrcL;
        *ctrl = info->regSrcMH;
        *ctrl = info->cmd;
        info++;
    }
    *VDP_CTRL_PORT = 0x8F02;          /* auto-increment back to 2 */
    dma_flushed_bytes = queueBytes;
    dma_total_bytes += queueBytes;
    queueIndex = 0;
    queueBytes = 0;
}

u16 DMA_getQueueSize(void)
{
    return queueIndex;
}

u32 DMA_getQueueTransferSize(void)
{
    return queueBytes;
}
