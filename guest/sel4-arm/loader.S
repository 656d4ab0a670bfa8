/* The loader's entry (QEMU starts it in SVC mode, the MMU off) and its way
 * into the kernel: enter_kernel(pd, entry, r0, r1, r2, r3) loads the page
 * directory (TTBCR = 0: TTBR0 alone, short descriptors; every domain a
 * client), invalidates the TLB and the instruction cache, sets SCTLR.M and
 * jumps to the kernel's virtual entry with r0..r3. */
    .section .text.start, "ax"
    .arm
    .global _start
_start:
    cpsid if
    ldr   sp, =loader_stack_top
    bl    loader_main
1:  b     1b

    .text
    .global enter_kernel
enter_kernel:
    mov   r6, r0
    mov   r7, r1
    mov   r0, r2
    mov   r1, r3
    ldr   r2, [sp, #0]
    ldr   r3, [sp, #4]
    mov   r4, #0
    mcr   p15, 0, r4, c2, c0, 2
    mcr   p15, 0, r6, c2, c0, 0
    ldr   r4, =0x55555555
    mcr   p15, 0, r4, c3, c0, 0
    mov   r4, #0
    mcr   p15, 0, r4, c8, c7, 0
    mcr   p15, 0, r4, c7, c5, 0
    dsb
    isb
    mrc   p15, 0, r4, c1, c0, 0
    orr   r4, r4, #1
    mcr   p15, 0, r4, c1, c0, 0
    isb
    bx    r7

    .bss
    .balign 16
    .skip 16384
loader_stack_top:
    .section .note.GNU-stack, "", %progbits
