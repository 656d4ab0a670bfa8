//! The multiboot header and the way from 32-bit protected mode (as QEMU's
//! multiboot loader enters, paging off) to long mode: page tables that map
//! the first GiB one to one in 2 MiB pages (the Hermit kernel takes them
//! over and maps the rest of memory itself, 2 MiB pages it finds already
//! mapped being fine to it), a GDT with a 64-bit code segment, then
//! `loader_main(multiboot_info)` on a stack of its own.

core::arch::global_asm!(
    r#"
    .section .multiboot, "a"
    .balign 4
mb_header:
    .long 0x1BADB002
    .long 0x00010003
    .long -(0x1BADB002 + 0x00010003)
    .long mb_header
    .long __load_start
    .long __load_end
    .long __bss_end
    .long mb_entry

    .section .text.entry, "ax"
    .code32
    .global mb_entry
mb_entry:
    cli
    cld
    mov %ebx, %esi
    mov $__bss_start, %edi
    mov $__bss_end, %ecx
    sub %edi, %ecx
    xor %eax, %eax
    rep stosb
    mov $boot_pdpt, %eax
    or $3, %eax
    mov %eax, boot_pml4
    mov $boot_pd, %eax
    or $3, %eax
    mov %eax, boot_pdpt
    mov $boot_pd, %edi
    mov $0x83, %eax
    mov $512, %ecx
1:
    mov %eax, (%edi)
    movl $0, 4(%edi)
    add $0x200000, %eax
    add $8, %edi
    loop 1b
    mov %cr4, %eax
    or $0x20, %eax
    mov %eax, %cr4
    mov $boot_pml4, %eax
    mov %eax, %cr3
    mov $0xC0000080, %ecx
    rdmsr
    or $0x100, %eax
    wrmsr
    mov %cr0, %eax
    or $0x80000001, %eax
    mov %eax, %cr0
    lgdt boot_gdt_ptr
    ljmp $0x08, $long_mode

    .code64
long_mode:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    xor %ax, %ax
    mov %ax, %fs
    mov %ax, %gs
    mov $boot_stack_top, %rsp
    mov %esi, %edi
    call loader_main
2:
    hlt
    jmp 2b

    .section .rodata.gdt, "a"
    .balign 8
boot_gdt:
    .quad 0
    .quad 0x00AF9A000000FFFF
    .quad 0x00CF92000000FFFF
boot_gdt_ptr:
    .word boot_gdt_ptr - boot_gdt - 1
    .long boot_gdt

    .section .bss.boot, "aw", @nobits
    .balign 4096
boot_pml4:
    .skip 4096
boot_pdpt:
    .skip 4096
boot_pd:
    .skip 4096
boot_stack:
    .skip 65536
boot_stack_top:
    "#,
    options(att_syntax)
);
