/*
 * The independent check of the sel4-arm environment: a bare root task that
 * times seL4_Call round trips to a server thread (seL4_ReplyRecv) with 0,
 * 1, 2, 4, 8 and 16 message registers, in its own address space, and
 * seL4_Yield and seL4_Reply, each with one pair of clock reads around a
 * plain loop of 10^5 (the registers neither written nor checked), and
 * prints a line for each on the console (plain text, no framing):
 *   sel4-check ipc=intra mrs=N round_trips=100000 total=T clock_hz=H
 *   sel4-check call=yield calls=100000 total=T clock_hz=H
 * The first line is the 0-register one. Nothing of oscycles' harness, plan
 * or checks; the board's devices and clock as machine.h has them. The
 * kernel counters' marks (marks.h: no-ops without the plugin) right outside
 * each loop's clock reads, in the order of the lines: a counted boot counts
 * each loop's kernel (the first window the 0-register loop's).
 */
#include "../freestanding/frame.h"
#include "../freestanding/marks.h"
#include "machine.h"

#define N 100000
extern char __image_start[];
extern void thread_entry(void);
static char stack[16384] __attribute__((aligned(4096)));
static char ipcbuf[4096] __attribute__((aligned(4096)));
static struct machine mach;

static void put(const char *s)
{
    while (*s)
        uart_put(*s++, &mach);
}

static void machine_fail(const char *what, seL4_Word err)
{
    (void)err;
    if (mach.uart)
        put(what);
    for (;;)
        sel4_yield();
}

void thread_main(seL4_Word ep)
{
    seL4_Word mr[REGISTER_MRS] = { 0 };
    seL4_Word info = sel4_recv(ep, mr);
    for (;;)
        info = sel4_reply_recv(ep, msginfo(0, 0, msginfo_length(info)), mr);
}

static void line(const char *what, uint32_t total)
{
    char num[21];
    put("\nsel4-check ");
    put(what);
    put(" total=");
    frame_u64_text(total, num);
    put(num);
    put(" clock_hz=");
    frame_u64_text(mach.board->clock_hz, num);
    put(num);
    put("\n");
}

void root_main(seL4_BootInfo *bi)
{
    static const char *const names[] = { "ipc=intra mrs=0 round_trips=100000", "ipc=intra mrs=1 round_trips=100000",
                                         "ipc=intra mrs=2 round_trips=100000", "ipc=intra mrs=4 round_trips=100000",
                                         "ipc=intra mrs=8 round_trips=100000", "ipc=intra mrs=16 round_trips=100000" };
    static const seL4_Word mrs[] = { 0, 1, 2, 4, 8, 16 };
    machine_init(&mach, bi);
    seL4_CPtr ut = largest_untyped(bi), ep = mach.free_slot, tcb = ep + 1;
    untyped_retype(ut, seL4_EndpointObject, 0, ep, 1);
    untyped_retype(ut, seL4_TCBObject, 0, tcb, 1);
    tcb_configure(tcb, 255, seL4_CapInitThreadVSpace, (seL4_Word)ipcbuf,
                  bi->userImageFrames.start + (((seL4_Word)ipcbuf - (seL4_Word)__image_start) >> 12));
    tcb_start(tcb, (seL4_Word)thread_entry, (seL4_Word)(stack + sizeof stack), ep, 0);
    seL4_Word mr[REGISTER_MRS] = { 0 };
    for (int k = 0; k < 6; k++) {
        MARK_BEGIN();
        uint32_t t0 = clock_read(&mach);
        for (int i = 0; i < N; i++)
            sel4_call(ep, msginfo(0, 0, mrs[k]), mr);
        uint32_t t = clock_read(&mach) - t0;
        MARK_END();
        line(names[k], t);
    }
    MARK_BEGIN();
    uint32_t t0 = clock_read(&mach);
    for (int i = 0; i < N; i++)
        sel4_yield();
    uint32_t t = clock_read(&mach) - t0;
    MARK_END();
    line("call=yield calls=100000", t);
    MARK_BEGIN();
    t0 = clock_read(&mach);
    for (int i = 0; i < N; i++)
        sel4_nomsg(SysReply, 0, msginfo(0, 0, 0));
    t = clock_read(&mach) - t0;
    MARK_END();
    line("call=null calls=100000", t);
    machine_exit(&mach);
}
