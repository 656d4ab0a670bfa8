/*
 * machine.h: what a root task on the two boards does beyond seL4's calls
 * (used by roottask.c and check.c): device pages mapped from the device
 * untyped that covers them, the console UART, QEMU's end through the
 * watchdog, and the clock. One image serves both boards: machine_init
 * finds the board it runs on (board.h). The clocks:
 *   imx7  PMCCNTR, the Cortex-A7's PMU cycle counter, read in user mode
 *         (the kernel's CONFIG_EXPORT_PMU_USER): one count a guest
 *         instruction under QEMU's -icount shift=0;
 *   imx6  the i.MX GPT, free running at 66 MHz in QEMU 7.2 (15.15 guest
 *         instructions a tick): QEMU's Cortex-A9 cycle counter stays 0.
 * Both are 32 bits wide; a batch's count is the difference modulo 2^32.
 * What the program sends is in guest instructions (clock_instructions).
 */
#ifndef OSCYCLES_SEL4_ARM_MACHINE_H
#define OSCYCLES_SEL4_ARM_MACHINE_H

#include "board.h"
#include "sel4.h"

/* A board: its name, its devices' physical pages, its clock. */
struct board {
    const char *name;
    seL4_Word uart, wdog, gpt; /* gpt 0: the clock is PMCCNTR */
    uint32_t clock_hz;
    const char *clock;
};

static const struct board BOARDS[] = {
    { "imx7 (QEMU mcimx7d-sabre, Cortex-A7)", 0x30890000u, 0x30280000u, 0, 1000000000u,
      "PMCCNTR (the Cortex-A7's PMU cycle counter, read in user mode)" },
    { "imx6 (QEMU sabrelite, Cortex-A9)", 0x021E8000u, 0x020BC000u, 0x02098000u, 66000000u,
      "the i.MX GPT, free running on the 66 MHz ipg clock (15.15 guest instructions a tick)" },
};

/* Device pages, one 4 KiB page each from here (a page table of their own). */
#define DEVICE_VA 0x10000000u
/* seL4 5.0.0 retypes at most this many objects in one call. */
#define RETYPE_MAX 256u

struct machine {
    seL4_BootInfo *bi;
    const struct board *board;
    seL4_CPtr free_slot;
    volatile uint32_t *uart, *wdog, *gpt;
    int devices;
};

/* What gcc may call for struct copies and zeroing, freestanding (one
 * program includes this header once). */
void *memset(void *d, int c, unsigned n)
{
    char *p = d;
    while (n--)
        *p++ = (char)c;
    return d;
}
void *memcpy(void *d, const void *s, unsigned n)
{
    char *p = d;
    const char *q = s;
    while (n--)
        *p++ = *q++;
    return d;
}

/* Reports a failure (machine_fail, in the program) and does not return. */
static void machine_fail(const char *what, seL4_Word err);

/* The largest untyped of memory (not of devices): where objects come from. */
static seL4_CPtr largest_untyped(const seL4_BootInfo *bi)
{
    int best = -1;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (!u->isDevice && (best < 0 || u->sizeBits > bi->untypedList[best].sizeBits))
            best = (int)i;
    }
    if (best < 0)
        machine_fail("no untyped memory", 0);
    return bi->untyped.start + (seL4_Word)best;
}

/* The index of the device untyped that covers `paddr`, or -1. */
static int device_untyped(const seL4_BootInfo *bi, seL4_Word paddr)
{
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        const seL4_UntypedDesc *u = &bi->untypedList[i];
        if (u->isDevice && paddr >= u->paddr && paddr - u->paddr < (1u << u->sizeBits))
            return (int)i;
    }
    return -1;
}

/* The device page at `paddr` mapped in the root task's address space: the
 * device untyped that covers it retyped into pages up to it (in steps the
 * kernel allows), the last one mapped uncached. */
static volatile uint32_t *map_device(struct machine *m, seL4_Word paddr)
{
    seL4_BootInfo *bi = m->bi;
    if (m->devices == 0) {
        seL4_CPtr pt = m->free_slot++;
        if (untyped_retype(largest_untyped(bi), seL4_ARM_PageTableObject, 0, pt, 1) ||
            page_table_map(pt, seL4_CapInitThreadVSpace, DEVICE_VA))
            machine_fail("a page table for the devices", 0);
    }
    int i = device_untyped(bi, paddr);
    if (i < 0)
        machine_fail("no device untyped covers", paddr);
    seL4_Word pages = ((paddr - bi->untypedList[i].paddr) >> 12) + 1, err = 0;
    while (pages > 0 && !err) {
        seL4_Word n = pages < RETYPE_MAX ? pages : RETYPE_MAX;
        err = untyped_retype(bi->untyped.start + (seL4_Word)i, seL4_ARM_SmallPageObject, 0, m->free_slot, n);
        m->free_slot += n;
        pages -= n;
    }
    seL4_Word va = DEVICE_VA + (seL4_Word)m->devices * 4096u;
    if (err || page_map(m->free_slot - 1, seL4_CapInitThreadVSpace, va, ARM_UNCACHED))
        machine_fail("mapping a device page", paddr);
    m->devices++;
    return (volatile uint32_t *)va;
}

static void uart_put(char c, void *ctx)
{
    volatile uint32_t *uart = ((struct machine *)ctx)->uart;
    while (!(uart[UART_USR2 / 4] & UART_USR2_TXFE))
        ;
    uart[UART_UTXD / 4] = (uint8_t)c;
}

/* The board (the one whose console a device untyped covers), its console
 * and watchdog (and the GPT where it is the clock) mapped, the UART
 * switched on (QEMU's i.MX UART drops what it gets while off), the clock
 * started. */
static void machine_init(struct machine *m, seL4_BootInfo *bi)
{
    m->bi = bi;
    m->free_slot = bi->empty.start;
    m->devices = 0;
    m->board = 0;
    for (unsigned i = 0; i < sizeof BOARDS / sizeof BOARDS[0] && !m->board; i++)
        if (device_untyped(bi, BOARDS[i].uart) >= 0)
            m->board = &BOARDS[i];
    if (!m->board)
        machine_fail("no known board: no device untyped covers a console UART", 0);
    m->uart = map_device(m, m->board->uart);
    m->uart[UART_UCR1 / 4] = UART_UCR1_ON;
    m->uart[UART_UCR2 / 4] = UART_UCR2_ON;
    m->wdog = map_device(m, m->board->wdog);
    if (m->board->gpt) {
        m->gpt = map_device(m, m->board->gpt);
        m->gpt[GPT_CR / 4] = 0;
        m->gpt[GPT_PR / 4] = 0;
        m->gpt[GPT_CR / 4] = GPT_CR_RUN;
    } else {
        uint32_t pmcr;
        asm volatile("mrc p15, 0, %0, c9, c12, 0" : "=r"(pmcr));
        asm volatile("mcr p15, 0, %0, c9, c12, 0" ::"r"(pmcr | 5u)); /* PMCR.E, .C (reset) */
        asm volatile("mcr p15, 0, %0, c9, c12, 1" ::"r"(1u << 31)); /* PMCNTENSET.C */
    }
}

static inline uint32_t clock_read(const struct machine *m)
{
    if (m->gpt)
        return m->gpt[GPT_CNT / 4];
    uint32_t v;
    asm volatile("mrc p15, 0, %0, c9, c13, 0" : "=r"(v));
    return v;
}

/* n / d by shifting and subtracting: no __aeabi_uldivmod from a libgcc
 * this program does not link (ARMv7-A has no divide instruction). Outside
 * the measured loops only. */
static uint64_t div_u64(uint64_t n, uint32_t d)
{
    uint64_t q = 0, r = 0;
    for (int i = 63; i >= 0; i--) {
        r = (r << 1) | ((n >> i) & 1u);
        if (r >= d) {
            r -= d;
            q |= 1ull << i;
        }
    }
    return q;
}

/* Guest instructions in `counts` of the clock (under -icount shift=0 a
 * nanosecond of QEMU's virtual clock is one instruction): the GPT's
 * 66 MHz ticks x 1000/66 (15.15 a tick), PMCCNTR's counts as they are. */
static inline uint64_t clock_instructions(const struct machine *m, uint64_t counts)
{
    return m->gpt ? div_u64(counts * 500u, 33u) : counts;
}

/* The harness's target batch, given in guest instructions, in the clock's
 * counts: on the GPT at least 2000 ticks (a tick's quantization under
 * 0.05% of a batch). */
static inline uint64_t clock_batch(const struct machine *m, uint64_t instructions)
{
    if (!m->gpt)
        return instructions;
    uint64_t ticks = div_u64(instructions * 33u, 500u);
    return ticks < 2000u ? 2000u : ticks;
}

/* QEMU's end: the console drained, then the watchdog's WCR = 0 (a reset,
 * which -no-reboot makes QEMU's exit with status 0). */
static void machine_exit(struct machine *m)
{
    while (!(m->uart[UART_USR2 / 4] & UART_USR2_TXDC))
        ;
    *(volatile uint16_t *)m->wdog = 0;
    for (;;)
        sel4_yield();
}

#endif
