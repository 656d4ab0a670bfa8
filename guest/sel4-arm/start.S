/* Entry of oscycles' seL4 root task (aarch32). The kernel starts the
 * initial thread in user mode with r0 = the boot info's address and no
 * stack: _start takes a stack in .bss and calls root_main(bootinfo).
 * Threads the root task starts begin at thread_entry with r0 = their
 * argument, sp = their stack (TCB_WriteRegisters). */
    .section .text.start, "ax"
    .arm
    .global _start
_start:
    ldr   sp, =root_stack_top
    bl    root_main
1:  b     1b

    .text
    .global thread_entry
thread_entry:
    bl    thread_main
1:  b     1b

    .bss
    .balign 16
root_stack:
    .skip 65536
root_stack_top:
    .section .note.GNU-stack, "", %progbits
