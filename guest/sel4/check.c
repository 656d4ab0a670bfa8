/*
 * The independent check of the sel4 environment: a root task of a few lines
 * that times 10^5 seL4_Call round trips with no payload to a server thread
 * in its own address space (seL4_ReplyRecv), with one rdtsc pair around the
 * whole loop, and prints `sel4-check round_trips=100000 total=T` on COM1
 * (plain text, no framing). Nothing of oscycles' harness, plan or checks;
 * the kernel counters' marks (marks.h: no-ops without the plugin) right
 * outside the rdtsc pair, so that a counted run counts the loop's kernel.
 */
#include "../freestanding/frame.h"
#include "../freestanding/marks.h"
#include "sel4.h"

extern char __image_start[];
extern void thread_entry(void);
static char stack[16384] __attribute__((aligned(4096)));
static char ipcbuf[4096] __attribute__((aligned(4096)));

static void put(const char *s) { while (*s) ioport_out8(0x3f8, (uint8_t)*s++); }

void thread_main(seL4_Word ep)
{
    seL4_Word m0 = 0, m1 = 0;
    sel4_recv(ep, &m0, &m1);
    for (;;)
        sel4_reply_recv(ep, msginfo(0, 0, 0), &m0, &m1);
}

void root_main(seL4_BootInfo *bi)
{
    int best = 0;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++)
        if (!bi->untypedList[i].isDevice && bi->untypedList[i].sizeBits > bi->untypedList[best].sizeBits)
            best = (int)i;
    seL4_CPtr ut = bi->untyped.start + (seL4_Word)best, ep = bi->empty.start, tcb = ep + 1;
    untyped_retype(ut, seL4_EndpointObject, 0, ep, 1);
    untyped_retype(ut, seL4_TCBObject, 0, tcb, 1);
    tcb_configure(tcb, 255, seL4_CapInitThreadVSpace, (seL4_Word)ipcbuf,
                  bi->userImageFrames.start + (((seL4_Word)ipcbuf - (seL4_Word)__image_start) >> 12));
    tcb_start(tcb, (seL4_Word)thread_entry, (seL4_Word)(stack + sizeof stack), ep);
    seL4_Word m0 = 0, m1 = 0;
    MARK_BEGIN();
    uint64_t t0 = rdtsc();
    for (int i = 0; i < 100000; i++)
        sel4_call(ep, msginfo(0, 0, 0), &m0, &m1);
    uint64_t t = rdtsc() - t0;
    MARK_END();
    char num[24];
    frame_u64_text(t, num);
    put("\nsel4-check round_trips=100000 total=");
    put(num);
    put("\n");
    ioport_out8(0xf4, 0);
    for (;;)
        sel4_yield();
}
