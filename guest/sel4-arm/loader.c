/*
 * oscycles' boot loader for seL4 5.0.0 on ARMv7 (neither the sel4-sys crate
 * nor QEMU brings seL4's elfloader). QEMU starts it as the board's -kernel
 * (linked at LOADER_BASE, in SVC mode, the MMU off) with the kernel's and
 * the root task's ELF files loaded unchanged at KERNEL_BLOB and TASK_BLOB
 * (board.h). It
 *   1. copies the kernel's loadable segments to their physical addresses;
 *   2. copies the root task's (one contiguous virtual range) to the pages
 *      right after the kernel;
 *   3. builds a page directory of 1 MiB sections: memory mapped 1:1
 *      (RAM cacheable, the rest strongly ordered and not executable), and
 *      the kernel's window, 0xe0000000 -> PHYS_BASE, over it;
 *   4. turns on the MMU (start.S) and enters the kernel with
 *      init_kernel's four arguments (src/arch/arm/kernel/boot.c):
 *      r0..r3 = the root task's physical start and end, the offset
 *      physical - virtual, its virtual entry.
 * A file that is not what it should be is said on the console (UART), and
 * the loader stops.
 */
#include <stdint.h>
#include "board.h"

#ifndef PHYS_BASE
#error "build the loader for a board: -DBOARD_IMX7 or -DBOARD_IMX6"
#endif

#define KERNEL_WINDOW 0xe0000000u
#define PT_LOAD 1u
#define EM_ARM 40u

typedef struct {
    unsigned char ident[16];
    uint16_t type, machine;
    uint32_t version, entry, phoff, shoff, flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
} Elf32_Ehdr;
typedef struct {
    uint32_t type, offset, vaddr, paddr, filesz, memsz, flags, align;
} Elf32_Phdr;

void enter_kernel(uint32_t pd, uint32_t entry, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3);

static uint32_t boot_pd[4096] __attribute__((aligned(16384)));

#define REG(a) (*(volatile uint32_t *)(a))

static void say(const char *s)
{
    REG(UART_PADDR + UART_UCR1) = UART_UCR1_ON;
    REG(UART_PADDR + UART_UCR2) = UART_UCR2_ON;
    for (; *s; s++) {
        while (!(REG(UART_PADDR + UART_USR2) & UART_USR2_TXFE))
            ;
        REG(UART_PADDR + UART_UTXD) = (uint8_t)*s;
    }
}

static void stop(const char *why)
{
    say("\noscycles-sel4-arm loader: FAILED ");
    say(why);
    say("\n");
    for (;;)
        ;
}

static void copy(char *to, const char *from, uint32_t n, uint32_t zeros)
{
    while (n--)
        *to++ = *from++;
    while (zeros--)
        *to++ = 0;
}

/* The ELF file at `blob`, checked: 32-bit little-endian ARM, its program
 * headers and segments inside BLOB_MAX. */
static const Elf32_Ehdr *elf_at(uint32_t blob, const char *what)
{
    const Elf32_Ehdr *h = (const Elf32_Ehdr *)blob;
    const unsigned char *id = h->ident;
    if (id[0] != 0x7f || id[1] != 'E' || id[2] != 'L' || id[3] != 'F' || id[4] != 1 || id[5] != 1 || h->machine != EM_ARM)
        stop(what);
    if (h->phentsize != sizeof(Elf32_Phdr) || h->phoff > BLOB_MAX || h->phnum > 16)
        stop(what);
    const Elf32_Phdr *p = (const Elf32_Phdr *)(blob + h->phoff);
    for (int i = 0; i < h->phnum; i++)
        if (p[i].type == PT_LOAD && (p[i].offset > BLOB_MAX || p[i].filesz > BLOB_MAX - p[i].offset || p[i].memsz < p[i].filesz))
            stop(what);
    return h;
}

static const Elf32_Phdr *segments(const Elf32_Ehdr *h)
{
    return (const Elf32_Phdr *)((uint32_t)h + h->phoff);
}

int loader_main(void)
{
    const Elf32_Ehdr *k = elf_at(KERNEL_BLOB, "no kernel ELF at KERNEL_BLOB");
    const Elf32_Ehdr *u = elf_at(TASK_BLOB, "no root task ELF at TASK_BLOB");
    const Elf32_Phdr *kp = segments(k), *up = segments(u);
    uint32_t kend = 0, vmin = ~0u, vmax = 0;
    for (int i = 0; i < k->phnum; i++) {
        if (kp[i].type != PT_LOAD)
            continue;
        if (kp[i].paddr < PHYS_BASE || kp[i].paddr + kp[i].memsz > KERNEL_BLOB)
            stop("a kernel segment outside RAM below the blobs");
        copy((char *)kp[i].paddr, (const char *)KERNEL_BLOB + kp[i].offset, kp[i].filesz, kp[i].memsz - kp[i].filesz);
        if (kp[i].paddr + kp[i].memsz > kend)
            kend = kp[i].paddr + kp[i].memsz;
    }
    for (int i = 0; i < u->phnum; i++) {
        if (up[i].type != PT_LOAD)
            continue;
        if (up[i].vaddr < vmin)
            vmin = up[i].vaddr;
        if (up[i].vaddr + up[i].memsz > vmax)
            vmax = up[i].vaddr + up[i].memsz;
    }
    vmin &= ~0xfffu;
    vmax = (vmax + 0xfffu) & ~0xfffu;
    uint32_t ui_start = (kend + 0xfffu) & ~0xfffu, ui_end = ui_start + (vmax - vmin);
    if (vmax <= vmin || ui_end > KERNEL_BLOB)
        stop("the root task's image does not fit below the blobs");
    uint32_t pv_offset = ui_start - vmin;
    copy((char *)ui_start, 0, 0, ui_end - ui_start);
    for (int i = 0; i < u->phnum; i++)
        if (up[i].type == PT_LOAD)
            copy((char *)(up[i].vaddr + pv_offset), (const char *)TASK_BLOB + up[i].offset, up[i].filesz, 0);
    /* Sections: AP = 01 (kernel read/write), TEX = 001 C B (normal,
     * write-back) for RAM, strongly ordered and XN elsewhere. */
    for (uint32_t i = 0; i < 4096; i++) {
        uint32_t pa = i << 20;
        boot_pd[i] = pa >= PHYS_BASE && pa < RAM_END ? pa | 1u << 12 | 1u << 10 | 0xcu | 0x2u : pa | 1u << 10 | 0x10u | 0x2u;
    }
    for (uint32_t va = KERNEL_WINDOW; va >= KERNEL_WINDOW && va < 0xfff00000u; va += 1u << 20)
        boot_pd[va >> 20] = (va - KERNEL_WINDOW + PHYS_BASE) | 1u << 12 | 1u << 10 | 0xcu | 0x2u;
    enter_kernel((uint32_t)boot_pd, k->entry, ui_start, ui_end, pv_offset, u->entry);
    return 0;
}
