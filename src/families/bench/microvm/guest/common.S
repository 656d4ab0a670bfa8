/*
 * The part of oscycles' microvm guest that reads the same in real mode and
 * in long mode: the case dispatch, the cases that need no addressing, and
 * the end. Included by microvm16.S and microvm64.S after their prologue,
 * which has loaded the case into ebx and the iteration count into ebp, and
 * defines c_mmio, c_touch, c_read and c_triple (the cases that address
 * memory differently in each mode).
 */
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

c_vmcall:
1:  mov     $0xffff, %eax           /* no such hypercall: KVM answers -ENOSYS */
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

c_forever:
    jmp     c_forever

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
