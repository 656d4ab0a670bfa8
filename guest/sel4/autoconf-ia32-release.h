/*
 * oscycles' configuration of seL4 5.0.0 (the source in crates.io sel4-sys
 * 0.0.28) for its sel4 environment: pc99, ia32, one node, release (no
 * CONFIG_DEBUG_BUILD, no printing). scripts/setup-sel4 copies it into the
 * build directory as autoconf.h; the fastpath is the make variable FASTPATH=1
 * (-DFASTPATH), which scripts/setup-sel4 passes.
 *
 * Made from the source's include/plat/pc99/autoconf.h (an x86_64 sel4test
 * configuration), its user-level (library, application) entries left out,
 * and these changes for ia32 under QEMU 7.2's TCG:
 *   CONFIG_WORD_SIZE 32, CONFIG_ARCH_IA32 (not CONFIG_ARCH_X86_64, no
 *     CONFIG_HUGE_PAGE);
 *   CONFIG_XAPIC, not CONFIG_X2APIC (QEMU 7.2's TCG has no x2APIC);
 *   no CONFIG_SUPPORT_PCID (no INVPCID under TCG);
 *   CONFIG_SYSENTER, not CONFIG_SYSCALL (ia32 has no syscall instruction);
 *   CONFIG_FSGSBASE_GDT, not CONFIG_FSGSBASE_INST (the fastpath needs a
 *     method to set the IPC buffer's segment).
 */
#define AUTOCONF_INCLUDED
#define CONFIG_ARCH_IA32 1
#define CONFIG_ARCH_X86 1
#define CONFIG_CACHE_LN_SZ 64
#define CONFIG_CROSS_COMPILER_PREFIX ""
#define CONFIG_DOMAIN_SCHEDULE ""
#define CONFIG_FASTPATH 1
#define CONFIG_FPU_MAX_RESTORES_SINCE_SWITCH 64
#define CONFIG_FSGSBASE_GDT 1
#define CONFIG_FXSAVE 1
#define CONFIG_HAVE_CACHE 1
#define CONFIG_HAVE_FPU 1
#define CONFIG_IOMMU 1
#define CONFIG_IRQ_IOAPIC 1
#define CONFIG_KERNEL_CFLAGS ""
#define CONFIG_KERNEL_COMPILER ""
#define CONFIG_KERNEL_EXTRA_CPPFLAGS ""
#define CONFIG_KERNEL_STACK_BITS 12
#define CONFIG_MAX_NUM_BOOTINFO_UNTYPED_CAPS 230
#define CONFIG_MAX_NUM_IOAPIC 1
#define CONFIG_MAX_NUM_NODES 1
#define CONFIG_MAX_NUM_WORK_UNITS_PER_PREEMPTION 100
#define CONFIG_MAX_RMRR_ENTRIES 32
#define CONFIG_NUM_DOMAINS 1
#define CONFIG_NUM_PRIORITIES 256
#define CONFIG_OPTIMISATION_O2 1
#define CONFIG_PLAT_PC99 1
#define CONFIG_RETYPE_FAN_OUT_LIMIT 256
#define CONFIG_ROOT_CNODE_SIZE_BITS 16
#define CONFIG_SYSENTER 1
#define CONFIG_TIMER_TICK_MS 2
#define CONFIG_TIME_SLICE 1
#define CONFIG_VERIFICATION_BUILD 1
#define CONFIG_WORD_SIZE 32
#define CONFIG_XAPIC 1
#define CONFIG_XSAVE_SIZE 512
