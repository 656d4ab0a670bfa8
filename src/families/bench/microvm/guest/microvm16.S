/*
 * oscycles' microvm guest, real mode (16-bit code, 32-bit registers).
 * Assembled by build.rs with GNU as and linked as a flat binary at guest
 * address 0x1000, entered with CS = DS = ES = SS = 0, IP = 0x1000.
 *
 * Protocol (guest memory):
 *   0x500 u32 case        0x504 u32 iterations
 *   0x600 u64 tsc before  0x608 u64 tsc after   0x610 u32 checksum
 * The loop counter lives in ebp (counting down), the checksum in edi
 * (edi += ebp every iteration, so it ends as n(n+1)/2 mod 2^32 for every
 * case): neither is touched by rdtsc, cpuid, out, hlt or vmcall.
 * Ports: 0xf2 marker (first instruction), 0xe0 the port-I/O case,
 * 0xf1 done, 0xf3 an exception: the VMM points the first 32 vectors of
 * the real-mode IVT at `exception` (0x1004).
 */
    .code16
    .text
    .globl _start
_start:
    jmp     begin
    .org    4
exception:                          /* at 0x1004 */
    mov     $0xf3, %dx
    out     %al, %dx
    cli
1:  hlt
    jmp     1b

begin:
    mov     $0xf2, %dx
    out     %al, %dx                /* marker: the guest runs */
    xor     %ax, %ax
    mov     %ax, %ds
    mov     %ax, %ss
    mov     $0x8000, %sp
    movl    0x500, %ebx             /* case */
    movl    0x504, %ebp             /* iterations */
    .include "common.S"

c_mmio:
    mov     $0xd000, %ax            /* 0xd0000: no memory slot there */
    mov     %ax, %es
1:  movb    $1, %es:0
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_touch:                            /* one store per fresh 4 KiB page from 0x20000 */
    mov     $0x2000, %ax
1:  mov     %ax, %es
    movb    $1, %es:0
    add     $0x100, %ax
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_read:                             /* each iteration reads 64 KiB at 0x10000 */
    mov     $0x1000, %ax
    mov     %ax, %es
1:  xor     %si, %si
    mov     $8192, %cx
2:  movl    %es:(%si), %eax
    movl    %es:4(%si), %edx
    add     $8, %si
    dec     %cx
    jnz     2b
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_triple:                           /* an interrupt with an empty IVT limit: shutdown */
    lidt    empty_idt
    int     $3
    jmp     done

    .p2align 2
empty_idt:
    .word   0
    .long   0
