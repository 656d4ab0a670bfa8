/*
 * oscycles' microvm guest, 64-bit long mode. The VMM enters it directly in
 * long mode (CR0.PG, CR4.PAE, EFER.LME/LMA, identity-mapped 2 MiB pages set
 * up by the VMM), at 0x1000. Same protocol as microvm16.S: case and
 * iterations at 0x500, results at 0x600, counter in ebp, checksum in edi.
 * No IDT: an exception here is a triple fault, which the VMM reports.
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
    xor     %edi, %edi
    rdtsc
    movl    %eax, 0x600
    movl    %edx, 0x604
    cmp     $0, %ebx
    je      c_empty
    cmp     $1, %ebx
    je      c_rdtsc
    cmp     $2, %ebx
    je      c_cpuid
    cmp     $3, %ebx
    je      c_hlt
    cmp     $4, %ebx
    je      c_pio
    cmp     $5, %ebx
    je      c_mmio
    cmp     $6, %ebx
    je      c_vmcall
    cmp     $7, %ebx
    je      c_vmmcall
    cmp     $8, %ebx
    je      c_touch
    cmp     $9, %ebx
    je      c_read
    cmp     $98, %ebx
    je      c_forever
    cmp     $99, %ebx
    je      c_triple
    jmp     done

c_empty:
    add     %ebp, %edi
    dec     %ebp
    jnz     c_empty
    jmp     done

c_rdtsc:
    rdtsc
    add     %ebp, %edi
    dec     %ebp
    jnz     c_rdtsc
    jmp     done

c_cpuid:
    xor     %eax, %eax
    cpuid
    add     %ebp, %edi
    dec     %ebp
    jnz     c_cpuid
    jmp     done

c_hlt:
    cli
    hlt
    add     %ebp, %edi
    dec     %ebp
    jnz     c_hlt
    jmp     done

c_pio:
    mov     $0xe0, %dx
1:  out     %al, %dx
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_mmio:
    mov     $0xd0000, %rsi
1:  movb    $1, (%rsi)
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_vmcall:
1:  mov     $0xffff, %eax
    vmcall
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_vmmcall:
1:  mov     $0xffff, %eax
    vmmcall
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_touch:
    mov     $0x20000, %rsi
1:  movb    $1, (%rsi)
    add     $0x1000, %rsi
    add     %ebp, %edi
    dec     %ebp
    jnz     1b
    jmp     done

c_read:
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

c_forever:
    jmp     c_forever

c_triple:
    ud2                             /* no IDT: #UD becomes a triple fault */
    jmp     done

done:
    rdtsc
    movl    %eax, 0x608
    movl    %edx, 0x60c
    movl    %edi, 0x610
    mov     $0xf1, %dx
    out     %al, %dx
    cli
1:  hlt
    jmp     1b
