/*
 * board.h: the two QEMU boards the sel4-arm environment boots seL4 on.
 *
 * The loader is built once per board (-DBOARD_IMX7 or -DBOARD_IMX6): QEMU
 * gets 1 GiB of RAM from PHYS_BASE; the host loads the kernel's and the
 * root task's ELF files unchanged at KERNEL_BLOB and TASK_BLOB (QEMU's
 * generic loader device) and the loader ELF (linked at LOADER_BASE) as the
 * board's -kernel; src/run/env/sel4_arm.rs names the same addresses (a
 * unit test there compares).
 *
 * The root task and the check are one image for both boards: they find
 * theirs at run time (BOARDS: the one whose console UART a device untyped
 * of the boot info covers).
 *
 * Devices (i.MX reference manuals; QEMU 7.2's fsl-imx6 and fsl-imx7):
 *   UART   the console the root task writes to: QEMU's serial1 (UART2). On
 *          the i.MX7 UART1, serial0, is not among the kernel's devices.
 *   WDOG   watchdog 1: WCR = 0 asks for a reset, which QEMU's -no-reboot
 *          turns into QEMU's exit (status 0).
 *   GPT    general purpose timer 1, free running on the ipg clock (66 MHz
 *          in QEMU 7.2: 15.15 guest instructions a tick under
 *          -icount shift=0): the clock of the imx6 board, whose Cortex-A9
 *          in QEMU 7.2 has no working cycle counter (PMCCNTR stays 0).
 */
#ifndef OSCYCLES_SEL4_ARM_BOARD_H
#define OSCYCLES_SEL4_ARM_BOARD_H

#define IMX7_PHYS_BASE 0x80000000
#define IMX6_PHYS_BASE 0x10000000

#if defined(BOARD_IMX7)
#define PHYS_BASE IMX7_PHYS_BASE
#define UART_PADDR 0x30890000
#elif defined(BOARD_IMX6)
#define PHYS_BASE IMX6_PHYS_BASE
#define UART_PADDR 0x021E8000
#endif

#define RAM_END (PHYS_BASE + 0x40000000)
#define KERNEL_BLOB (PHYS_BASE + 0x30000000)
#define TASK_BLOB (PHYS_BASE + 0x34000000)
#define LOADER_BASE (PHYS_BASE + 0x38000000)
#define BLOB_MAX 0x04000000

/* i.MX UART registers (32-bit words). */
#define UART_UTXD 0x40u
#define UART_UCR1 0x80u
#define UART_UCR2 0x84u
#define UART_USR2 0x98u
#define UART_USR2_TXFE (1u << 14)
#define UART_USR2_TXDC (1u << 3)
/* UCR1.UARTEN; UCR2: SRST (not in reset), RXEN, TXEN, WS (8 bits), IRTS. */
#define UART_UCR1_ON 1u
#define UART_UCR2_ON ((1u << 0) | (1u << 1) | (1u << 2) | (1u << 5) | (1u << 14))

/* i.MX GPT registers. */
#define GPT_CR 0x00u
#define GPT_PR 0x04u
#define GPT_CNT 0x24u
/* CR: EN, ENMOD (reset the counter on enable), CLKSRC = ipg, FRR (free run). */
#define GPT_CR_RUN ((1u << 0) | (1u << 1) | (1u << 6) | (1u << 9))

#endif
