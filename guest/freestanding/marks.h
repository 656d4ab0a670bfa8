/*
 * marks.h: the two marks of the kernel counters (`--kernel-counters`,
 * src/measure/marks.rs; the QEMU plugin, plugin/src/decode.rs, knows them
 * by their bytes): MARK_BEGIN() right before a timed stretch's first clock
 * read, MARK_END() right after its last. The plugin counts what the guest
 * executes between them (one window a pair). A no-op without the plugin:
 * one instruction that reads and writes nothing, not even the flags.
 *
 * harness.h puts them around every timed batch when the host asks for
 * them (`mark=1`); an independent check program (guest/sel4/check.c,
 * guest/mach/check.c) around its one timed loop, always (guest/sel4-arm/
 * check.c around each of its loops, in the order of its lines).
 *
 * x86 (i386 and x86-64): `nopl 0x4b4f5301(%eax)` / `nopl 0x4b4f5302(%eax)`
 * (0f 1f 80 and the displacement; `(%rax)` in 64-bit code, the same bytes).
 * 32-bit ARM in A32 state (guest/sel4-arm): `hint #0xb1` / `hint #0xb2`,
 * hints no architecture allocates, which ARMv7-A, ARMv8's A32 and QEMU
 * execute as NOPs and no compiler emits (plugin/src/decode.rs, ARM_BEGIN
 * and ARM_END, says why these; its test reads the words here). Thumb code
 * is not marked: `.inst` there would be another instruction.
 * Another architecture is one more #elif with its own no-op the plugin of
 * its QEMU knows; without one the marks are empty (nothing is counted).
 */
#ifndef OSCYCLES_MARKS_H
#define OSCYCLES_MARKS_H

#if defined(__i386__) || defined(__x86_64__)
#define MARK_BEGIN() __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x01, 0x53, 0x4f, 0x4b")
#define MARK_END() __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x02, 0x53, 0x4f, 0x4b")
#define MARKS_COUNTED 1
#elif defined(__arm__) && !defined(__thumb__)
#define MARK_ARM_BEGIN "0xe320f0b1"
#define MARK_ARM_END "0xe320f0b2"
#define MARK_BEGIN() __asm__ volatile(".inst " MARK_ARM_BEGIN)
#define MARK_END() __asm__ volatile(".inst " MARK_ARM_END)
#define MARKS_COUNTED 1
#else
#define MARK_BEGIN() ((void)0)
#define MARK_END() ((void)0)
#define MARKS_COUNTED 0
#endif

#endif
