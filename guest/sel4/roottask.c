/*
 * oscycles' seL4 root task (ia32, freestanding): booted by `oscycles run
 * --env sel4` as QEMU's multiboot module beside the seL4 5.0.0 kernel. It
 * says hello as its first act, reads the plan the host wrote into its image
 * (oscycles_args: the key=value words of src/run/env/program/words.rs),
 * measures the cases it knows with rdtsc in batches (guest/freestanding/
 * harness.h: the words, the harness, the samples), sends their samples
 * framed over COM1 (guest/freestanding/frame.h, one IOPort invocation a
 * character), and ends QEMU through isa-debug-exit.
 *
 * Cases, in seL4's terms:
 *   ipc.sel4-call      seL4_Call to a server thread in seL4_ReplyRecv: in the
 *                      root task's address space (intra) or in a second one
 *                      (inter: its own page directory, the image's frames
 *                      mapped again); `words` 64-bit words = 2 message
 *                      registers each; every register written by the client,
 *                      checked by the server, answered with its complement
 *                      and checked by the client. Cross-core: n/a (one node).
 *   syscall.sched_yield seL4_Yield alone.
 *   syscall.null       seL4_Reply with nobody to reply to: the kernel looks
 *                      at the empty reply slot and returns, the cheapest
 *                      kernel entry (seL4_Signal on an idle notification,
 *                      a capability lookup more, costs a third more).
 *   hermit.sched_yield-busy  seL4_Yield with a second thread of the same
 *                      priority yielding back: two switches an operation.
 */
#include "../freestanding/harness.h"
#include "sel4.h"

extern char __image_start[], __image_end[];
extern void thread_entry(void);

/* The plan: the host overwrites this marker and what follows (NUL-ended). */
__attribute__((used, aligned(16))) char oscycles_args[16384] = "@@OSCYCLES-SEL4-ARGS@@";

static seL4_BootInfo *bi;
static seL4_CPtr free_slot, untyped;

/* ---- output ------------------------------------------------------------ */

static void serial_put(char c, void *ctx)
{
    (void)ctx;
    ioport_out8(0x3f8, (uint8_t)c);
}
static const struct frame_out serial = { serial_put, 0 };

static void qemu_exit(uint8_t code)
{
    ioport_out8(0xf4, code);
    for (;;)
        sel4_yield();
}

static void fail(const char *what, seL4_Word err)
{
    say_failed(&serial, "oscycles-sel4", what, err);
    qemu_exit(1);
}

/* ---- objects and threads ----------------------------------------------- */

static seL4_CPtr retype(seL4_Word type, seL4_Word bits, const char *what)
{
    seL4_CPtr slot = free_slot++;
    seL4_Word err = untyped_retype(untyped, type, bits, slot, 1);
    if (err)
        fail(what, err);
    return slot;
}

static seL4_CPtr image_frame(const void *va)
{
    return bi->userImageFrames.start + (((seL4_Word)va - (seL4_Word)__image_start) >> 12);
}

enum { ROLE_SERVER = 1, ROLE_YIELDER = 2, THREADS = 3 };
static char thread_stack[THREADS][16384] __attribute__((aligned(4096)));
static char thread_ipcbuf[THREADS][4096] __attribute__((aligned(4096)));

/* A thread at the root task's priority (255) in `vspace`, running
 * thread_main(role << 16 | cap). */
static seL4_CPtr start_thread(int idx, seL4_CPtr vspace, seL4_Word role, seL4_CPtr cap)
{
    seL4_CPtr tcb = retype(seL4_TCBObject, 0, "retype TCB");
    seL4_Word err = tcb_configure(tcb, 255, vspace, (seL4_Word)thread_ipcbuf[idx], image_frame(thread_ipcbuf[idx]));
    if (err)
        fail("TCB_Configure", err);
    err = tcb_start(tcb, (seL4_Word)thread_entry, (seL4_Word)(thread_stack[idx] + sizeof thread_stack[idx]), role << 16 | cap);
    if (err)
        fail("TCB_WriteRegisters", err);
    return tcb;
}

/* A second address space: a page directory in the initial ASID pool, page
 * tables over the image, and every image frame mapped again at its address
 * (the same physical pages: code, stacks, IPC buffers, the counters). */
static seL4_CPtr second_vspace(void)
{
    seL4_CPtr pd = retype(seL4_X86_PageDirectoryObject, 0, "retype PD");
    seL4_Word err = asid_pool_assign(pd);
    if (err)
        fail("ASIDPool_Assign", err);
    seL4_Word start = (seL4_Word)__image_start, end = (seL4_Word)__image_end;
    for (seL4_Word va = start & ~0x3fffffu; va < end; va += 0x400000)
        if ((err = page_table_map(retype(seL4_X86_PageTableObject, 0, "retype PT"), pd, va)))
            fail("PageTable_Map", err);
    for (seL4_Word i = 0; i < bi->userImageFrames.end - bi->userImageFrames.start; i++) {
        seL4_CPtr copy = free_slot++;
        if ((err = cnode_copy(copy, bi->userImageFrames.start + i)))
            fail("CNode_Copy", err);
        if ((err = page_map(copy, pd, start + (i << 12))))
            fail("Page_Map", err);
    }
    return pd;
}

/* ---- the server and the yielder ---------------------------------------- */

#define WORD_STEP 0x85EBCA77u
static volatile uint32_t served, served_bad;

static uint32_t expected(seL4_Word label, int k) { return label * 0x9E3779B1u + (uint32_t)k * WORD_STEP; }

static void serve(seL4_CPtr ep)
{
    seL4_Word m0, m1;
    seL4_Word info = sel4_recv(ep, &m0, &m1);
    for (;;) {
        seL4_Word label = msginfo_label(info), n = msginfo_length(info);
        int bad = (n > 0 && m0 != expected(label, 0)) || (n > 1 && m1 != expected(label, 1));
        for (seL4_Word k = 2; k < n; k++) {
            bad |= get_mr((int)k) != expected(label, (int)k);
            set_mr((int)k, ~expected(label, (int)k));
        }
        served = served + 1;
        served_bad = served_bad + (uint32_t)bad;
        m0 = ~expected(label, 0);
        m1 = ~expected(label, 1);
        info = sel4_reply_recv(ep, msginfo(label, 0, n), &m0, &m1);
    }
}

void thread_main(seL4_Word arg)
{
    if (arg >> 16 == ROLE_SERVER)
        serve(arg & 0xffff);
    for (;;)
        sel4_yield();
}

/* ---- the batches ---------------------------------------------------------- */

struct ipc_ctx {
    seL4_CPtr ep;
    seL4_Word mrs, seq;
    uint32_t bad, calls;
};

static uint64_t ipc_batch(void *p, uint32_t n)
{
    struct ipc_ctx *c = p;
    seL4_Word mrs = c->mrs;
    uint64_t t0 = BATCH_BEGIN(rdtsc());
    for (uint32_t i = 0; i < n; i++) {
        seL4_Word label = ++c->seq & 0xfffff;
        seL4_Word m0 = expected(label, 0), m1 = expected(label, 1);
        for (seL4_Word k = 2; k < mrs; k++)
            set_mr((int)k, expected(label, (int)k));
        seL4_Word info = sel4_call(c->ep, msginfo(label, 0, mrs), &m0, &m1);
        int bad = msginfo_length(info) != mrs || msginfo_label(info) != label;
        bad |= (mrs > 0 && m0 != ~expected(label, 0)) || (mrs > 1 && m1 != ~expected(label, 1));
        for (seL4_Word k = 2; k < mrs; k++)
            bad |= get_mr((int)k) != ~expected(label, (int)k);
        c->bad += (uint32_t)bad;
    }
    c->calls += n;
    return BATCH_END(rdtsc(), t0);
}

static uint64_t yield_batch(void *p, uint32_t n)
{
    (void)p;
    uint64_t t0 = BATCH_BEGIN(rdtsc());
    for (uint32_t i = 0; i < n; i++)
        sel4_yield();
    return BATCH_END(rdtsc(), t0);
}

static uint64_t reply_batch(void *p, uint32_t n)
{
    (void)p;
    uint64_t t0 = BATCH_BEGIN(rdtsc());
    for (uint32_t i = 0; i < n; i++)
        sel4_nomsg(SysReply, 0, msginfo(0, 0, 0));
    return BATCH_END(rdtsc(), t0);
}

/* ---- the cases ------------------------------------------------------------ */

static char samples_mem[65536];
static seL4_CPtr ep_intra, ep_inter;

static void ipc_case(const struct rows *it, struct span row)
{
    struct span space;
    uint64_t words;
    if (!ipc_case_begin("ipc.sel4-call", it, row, "cross-core: a one-node kernel (CONFIG_MAX_NUM_NODES 1), one CPU", &space, &words))
        return;
    if (2 * words > seL4_MsgMaxLength)
        return case_not("n/a", "one seL4 message carries at most 120 message registers (60 64-bit words on ia32)");
    struct ipc_ctx c = { span_is(space, "intra") ? ep_intra : ep_inter, (seL4_Word)(2 * words), 0, 0, 0 };
    uint32_t served0 = served, bad0 = served_bad;
    uint32_t inner = measure(ipc_batch, &c);
    uint32_t by_server = served - served0;
    if (c.bad || served_bad != bad0 || by_server != c.calls)
        return case_not("failed", "a message word came back wrong (checked by the server and the client)");
    fb_kv_u64(&doc, 0, "round_trips", c.calls);
    fb_kv_u64(&doc, 0, "requests_verified_by_server", by_server);
    fb_kv_u64(&doc, 0, "message_registers", c.mrs);
    fb_kv_str(&doc, 0, "path", c.mrs <= 2 ? "fastpath (message in registers)" : "slowpath (message registers beyond the two in registers)");
    case_ok(inner);
}

static void ipc_cases(void)
{
    struct rows it;
    struct span row;
    if (planned("ipc.sel4-call") && rows_of("ipc.sel4-call", &it))
        while (next_row(&it, &row))
            ipc_case(&it, row);
}

static void single_cases(void)
{
    uint32_t inner;
    if (planned("syscall.sched_yield")) {
        inner = measure(yield_batch, 0);
        case_begin("syscall.sched_yield");
        fb_kv_str(&doc, 0, "path", "seL4_Yield alone on the CPU");
        case_ok(inner);
    }
    if (planned("syscall.null")) {
        inner = measure(reply_batch, 0);
        case_begin("syscall.null");
        fb_kv_str(&doc, 0, "path", "seL4_Reply with nobody to reply to: the kernel finds the reply slot empty and returns (the cheapest kernel entry)");
        case_ok(inner);
    }
    if (planned("hermit.sched_yield-busy")) {
        seL4_CPtr t = start_thread(2, seL4_CapInitThreadVSpace, ROLE_YIELDER, 0);
        inner = measure(yield_batch, 0);
        tcb_suspend(t);
        case_begin("hermit.sched_yield-busy");
        fb_kv_str(&doc, 0, "path", "seL4_Yield with a second thread of the same priority yielding back: two thread switches an operation");
        case_ok(inner);
    }
}

/* ---- the root task -------------------------------------------------------- */

static void setup(void)
{
    int best = -1;
    for (seL4_Word i = 0; i < bi->untyped.end - bi->untyped.start; i++) {
        seL4_UntypedDesc *u = &bi->untypedList[i];
        if (!u->isDevice && (best < 0 || u->sizeBits > bi->untypedList[best].sizeBits))
            best = (int)i;
    }
    if (best < 0)
        fail("no untyped memory", 0);
    untyped = bi->untyped.start + (seL4_Word)best;
    free_slot = bi->empty.start;
    ep_intra = retype(seL4_EndpointObject, 0, "retype endpoint");
    start_thread(0, seL4_CapInitThreadVSpace, ROLE_SERVER, ep_intra);
    ep_inter = retype(seL4_EndpointObject, 0, "retype endpoint");
    start_thread(1, second_vspace(), ROLE_SERVER, ep_inter);
}

void root_main(seL4_BootInfo *bootinfo)
{
    struct span mode = { "run", 3 };
    bi = bootinfo;
    harness_words(oscycles_args);
    word_arg("mode", &mode);
    if (span_is(mode, "no-init"))
        for (;;)
            sel4_yield();
    if (span_is(mode, "panic"))
        qemu_exit(1);
    frame_send(&serial, "hello", 0, "sel4", 4);
    if (span_is(mode, "hang"))
        for (;;)
            sel4_yield();
    setup();
    doc_begin(samples_mem, sizeof samples_mem, "oscycles-sel4", "seL4 5.0.0 ia32");
    fb_kv_u64(&doc, 0, "tsc_mhz_bootinfo", bi->archInfo);
    doc_cases();
    ipc_cases();
    single_cases();
    doc_end();
    frame_send(&serial, "samples", 1, doc.p, doc.len);
    qemu_exit(0);
}
