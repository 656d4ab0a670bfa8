/*
 * oscycles' configuration of seL4 5.0.0 (the source in crates.io sel4-sys
 * 0.0.28) for its sel4-arm environment: aarch32, ARMv7-A, one node, release
 * (no CONFIG_DEBUG_BUILD, no printing). The board's own file
 * (autoconf-imx7.h, autoconf-imx6.h) names the CPU and the platform and
 * includes this one; scripts/setup-sel4-arm copies both into the build
 * directory, the board's as autoconf.h. The fastpath is the make variable
 * FASTPATH=1 (-DFASTPATH), which scripts/setup-sel4-arm passes.
 *
 * Made from the source's include/plat/imx6/autoconf.h (a sel4test
 * configuration), its user-level (library, application) entries left out
 * (none is read by the kernel), and these changes:
 *   CONFIG_NUM_DOMAINS 16 -> 1 (as the ia32 configuration);
 *   CONFIG_ROOT_CNODE_SIZE_BITS 12 -> 16 (the root task copies every image
 *     frame's capability for its second address space);
 *   CONFIG_EXPORT_PMU_USER added: PMUSERENR.EN, so the root task reads
 *     the PMU cycle counter (PMCCNTR) in user mode.
 */
#define CONFIG_ARCH_ARM 1
#define CONFIG_ARCH_AARCH32 1
#define CONFIG_ARCH_ARM_V7A 1
#define CONFIG_WORD_SIZE 32
#define CONFIG_MAX_NUM_NODES 1
#define CONFIG_FASTPATH 1
#define CONFIG_IPC_BUF_TPIDRURW 1
#define CONFIG_EXPORT_PMU_USER 1
#define CONFIG_NUM_DOMAINS 1
#define CONFIG_DOMAIN_SCHEDULE ""
#define CONFIG_NUM_PRIORITIES 256
#define CONFIG_TIME_SLICE 5
#define CONFIG_TIMER_TICK_MS 2
#define CONFIG_ROOT_CNODE_SIZE_BITS 16
#define CONFIG_RETYPE_FAN_OUT_LIMIT 256
#define CONFIG_MAX_NUM_WORK_UNITS_PER_PREEMPTION 100
#define CONFIG_MAX_NUM_BOOTINFO_DEVICE_REGIONS 199
#define CONFIG_MAX_NUM_BOOTINFO_UNTYPED_CAPS 166
#define CONFIG_MAX_NUM_TRACE_POINTS 0
#define CONFIG_KERNEL_STACK_BITS 12
#define CONFIG_KERNEL_CFLAGS ""
#define CONFIG_KERNEL_COMPILER ""
#define CONFIG_KERNEL_EXTRA_CPPFLAGS ""
#define CONFIG_VERIFICATION_BUILD 1
