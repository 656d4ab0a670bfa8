/* Entry of oscycles' seL4 root task (ia32). The kernel starts the initial
 * thread with EBX = the boot info's address, no stack and null segments:
 * _start takes a stack in .bss, points %fs at the IPC buffer's segment and
 * calls root_main(bootinfo). Threads the root task starts begin at
 * thread_entry with EAX = their argument, ESP = their stack (and %fs set by
 * TCB_WriteRegisters). */
    .section .text.start, "ax"
    .global _start
_start:
    movl  $root_stack_top, %esp
    movl  $0x3b, %eax
    movl  %eax, %fs
    pushl %ebx
    call  root_main
1:  jmp   1b

    .text
    .global thread_entry
thread_entry:
    pushl %eax
    call  thread_main
1:  jmp   1b

    .bss
    .balign 16
root_stack:
    .skip 65536
root_stack_top:
    .section .note.GNU-stack, "", @progbits
