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
 * guest/mach/check.c) around its one timed loop, always.
 *
 * x86 (i386 and x86-64): `nopl 0x4b4f5301(%eax)` / `nopl 0x4b4f5302(%eax)`
 * (0f 1f 80 and the displacement; `(%rax)` in 64-bit code, the same bytes).
 * Another architecture is one more #elif with its own no-op the plugin of
 * its QEMU knows; without one the marks are empty (nothing is counted).
 */
#ifndef OSCYCLES_MARKS_H
#define OSCYCLES_MARKS_H

#if defined(__i386__) || defined(__x86_64__)
#define MARK_BEGIN() __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x01, 0x53, 0x4f, 0x4b")
#define MARK_END() __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x02, 0x53, 0x4f, 0x4b")
#define MARKS_COUNTED 1
#else
#define MARK_BEGIN() ((void)0)
#define MARK_END() ((void)0)
#define MARKS_COUNTED 0
#endif

#endif
