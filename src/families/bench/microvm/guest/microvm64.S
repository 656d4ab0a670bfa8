/*
 * oscycles' microvm guest, 64-bit long mode. The VMM enters it directly in
 * long mode (CR0.PG, CR4.PAE, EFER.LME/LMA, identity-mapped 2 MiB pages set
 * up by the VMM), at 0x1000. Same protocol as microvm16.S. No IDT: an
 * exception here is a triple fault, which the VMM reports.
 */
    .code64
    .text
    .globl _start
_start:
    mov     $0xf2, %dx
    out     %al, %dx                /* marker: the guest runs */
    mov     $0x8000, %rsp
    movl    0x500, %ebx
    movl    0x504, %ebp
    .include "common.S"

c_mmio:
    mov     $0xd0000, %rsi          /* no memory slot there */
1:  movb    $1, (%rsi)
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_touch:                            /* one store per fresh 4 KiB page from 0x20000 */
    mov     $0x20000, %rsi
1:  movb    $1, (%rsi)
    add     $0x1000, %rsi
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_read:                             /* each iteration reads 64 KiB at 0x10000 */
1:  mov     $0x10000, %rsi
    mov     $8192, %ecx
2:  mov     (%rsi), %rax
    add     $8, %rsi
    dec     %ecx
    jnz     2b
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_triple:
    ud2                             /* no IDT: #UD becomes a triple fault */
    jmp     done
