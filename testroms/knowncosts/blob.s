| dma_blob: 9,728 bytes (304 tiles) of brick tiles in ROM, the source of the
| growing phase-D DMA. Tile t uses brick colour 8 + (t & 3), mortar 12.
    .section .rodata.dma_blob,"a"
    .balign 2
    .globl  dma_blob
dma_blob:
    .set    .Ltcol, 0
    .rept   304
    .long   0xCCCCCCCC
    .long   (0x01111111 * (8 + .Ltcol)) | 0xC0000000
    .long   (0x01111111 * (8 + .Ltcol)) | 0xC0000000
    .long   (0x01111111 * (8 + .Ltcol)) | 0xC0000000
    .long   0xCCCCCCCC
    .long   (0x11110111 * (8 + .Ltcol)) | 0x0000C000
    .long   (0x11110111 * (8 + .Ltcol)) | 0x0000C000
    .long   (0x11110111 * (8 + .Ltcol)) | 0x0000C000
    .set    .Ltcol, (.Ltcol + 1) & 3
    .endr
    .globl  dma_blob_end
dma_blob_end:
