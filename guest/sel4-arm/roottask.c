/*
 * oscycles' seL4 root task for ARM (aarch32, freestanding): booted by
 * `oscycles run --env sel4-arm` through oscycles' loader (loader.c) beside
 * the seL4 5.0.0 kernel, on QEMU's mcimx7d-sabre (imx7) or sabrelite
 * (imx6). The port of the ia32 root task (guest/sel4/roottask.c) to ARM's
 * ABI: it says hello as its first act, reads the plan the host wrote into
 * its image (oscycles_args: the key=value words of
 * src/run/env/program/words.rs), measures the cases it knows with the
 * board's clock (machine.h) in batches (guest/freestanding/harness.h: the
 * words, the harness, the samples), sends their samples framed over the
 * board's UART (guest/freestanding/frame.h), and ends QEMU through the
 * watchdog.
 *
 * Cases, in seL4's terms:
 *   ipc.sel4-call      seL4_Call to a server thread in seL4_ReplyRecv: in the
 *                      root task's address space (intra) or in a second one
 *                      (inter: its own page directory and ASID, the image's
 *                      frames mapped again); `words` counts 32-bit message
 *                      registers here (ARM's word, as the L4 page's ARM
 *                      table counts them): MR0..MR3 travel in r2..r5, so
 *                      0..4 take the fastpath; every register written by
 *                      the client, checked by the server, answered with its
 *                      complement and checked by the client. Cross-core:
 *                      n/a (one node).
 *   syscall.sched_yield seL4_Yield alone.
 *   syscall.null       seL4_Reply with nobody to reply to: the cheapest
 *                      kernel entry.
 *   hermit.sched_yield-busy  seL4_Yield with a second thread of the same
 *                      priority yielding back: two switches an operation.
 */
#include "../freestanding/harness.h"
#include "machine.h"

extern char __image_start[], __image_end[];
extern void thread_entry(void);

/* The plan: the host overwrites this marker and what follows (NUL-ended). */
__attribute__((used, aligned(16))) char oscycles_args[16384] = "@@OSCYCLES-SEL4-ARGS@@";

static struct machine mach;
static seL4_CPtr untyped;
static const struct frame_out serial = { uart_put, &mach };

static void machine_fail(const char *what, seL4_Word err)
{
    if (!mach.uart)
        for (;;)
            sel4_yield();
    say_failed(&serial, "oscycles-sel4-arm", what, err);
    machine_exit(&mach);
}
#define fail machine_fail

/* ---- objects and threads ----------------------------------------------- */

static seL4_CPtr retype(seL4_Word type, seL4_Word bits, const char *what)
{
    seL4_CPtr slot = mach.free_slot++;
    seL4_Word err = untyped_retype(untyped, type, bits, slot, 1);
    if (err)
        fail(what, err);
    return slot;
}

static seL4_CPtr image_frame(const void *va)
{
    return mach.bi->userImageFrames.start + (((seL4_Word)va - (seL4_Word)__image_start) >> 12);
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
    err = tcb_start(tcb, (seL4_Word)thread_entry, (seL4_Word)(thread_stack[idx] + sizeof thread_stack[idx]), role << 16 | cap, 0);
    if (err)
        fail("TCB_WriteRegisters", err);
    return tcb;
}

/* A second address space: a page directory in the initial ASID pool, page
 * tables over the image (1 MiB each), and every image frame mapped again at
 * its address (the same physical pages: code, stacks, IPC buffers, the
 * counters). */
static seL4_CPtr second_vspace(void)
{
    seL4_CPtr pd = retype(seL4_ARM_PageDirectoryObject, 0, "retype PD");
    seL4_Word err = asid_pool_assign(pd);
    if (err)
        fail("ASIDPool_Assign", err);
    seL4_Word start = (seL4_Word)__image_start, end = (seL4_Word)__image_end;
    for (seL4_Word va = start & ~0xfffffu; va < end; va += 0x100000)
        if ((err = page_table_map(retype(seL4_ARM_PageTableObject, 0, "retype PT"), pd, va)))
            fail("PageTable_Map", err);
    for (seL4_Word i = 0; i < mach.bi->userImageFrames.end - mach.bi->userImageFrames.start; i++) {
        seL4_CPtr copy = mach.free_slot++;
        if ((err = cnode_copy(copy, mach.bi->userImageFrames.start + i)))
            fail("CNode_Copy", err);
        if ((err = page_map(copy, pd, start + (i << 12), ARM_CACHEABLE)))
            fail("Page_Map", err);
    }
    return pd;
}

/* ---- the server and the yielder ---------------------------------------- */

#define WORD_STEP 0x85EBCA77u

/* Requests served and those with a wrong register: the server thread's,
 * and the dry run's (the harness's own work, no kernel). */
struct tally {
    volatile uint32_t served, bad;
};
static struct tally by_server, by_dry_run;

static uint32_t expected(seL4_Word label, int k) { return label * 0x9E3779B1u + (uint32_t)k * WORD_STEP; }

/* The server's work on a request of `n` registers labelled `label`: each
 * checked and answered with its complement (MR0..3 in `mr`, the rest in
 * the IPC buffer), counted in `t`. */
static inline __attribute__((always_inline)) void answer(seL4_Word label, seL4_Word n, seL4_Word *mr, struct tally *t)
{
    int bad = 0;
    for (seL4_Word k = 0; k < n; k++) {
        if (k < REGISTER_MRS) {
            bad |= mr[k] != expected(label, (int)k);
            mr[k] = ~expected(label, (int)k);
        } else {
            bad |= get_mr((int)k) != expected(label, (int)k);
            set_mr((int)k, ~expected(label, (int)k));
        }
    }
    t->served = t->served + 1;
    t->bad = t->bad + (uint32_t)bad;
}

static void serve(seL4_CPtr ep)
{
    seL4_Word mr[REGISTER_MRS] = { 0 };
    seL4_Word info = sel4_recv(ep, mr);
    for (;;) {
        seL4_Word label = msginfo_label(info), n = msginfo_length(info);
        answer(label, n, mr, &by_server);
        info = sel4_reply_recv(ep, msginfo(label, 0, n), mr);
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

/* n round trips of the case's registers, each written, sent, checked by
 * the server, answered and checked; `dry`: the server's work done in
 * place of the call (the harness's own work, no kernel entry). */
static inline __attribute__((always_inline)) uint64_t ipc_loop(struct ipc_ctx *c, uint32_t n, int dry)
{
    seL4_Word mrs = c->mrs, mr[REGISTER_MRS] = { 0 };
    uint32_t t0 = BATCH_BEGIN(clock_read(&mach));
    for (uint32_t i = 0; i < n; i++) {
        seL4_Word label = ++c->seq & 0xfffff, info = msginfo(label, 0, mrs);
        for (seL4_Word k = 0; k < mrs; k++) {
            if (k < REGISTER_MRS)
                mr[k] = expected(label, (int)k);
            else
                set_mr((int)k, expected(label, (int)k));
        }
        if (dry) { /* the server's side as serve() has it, in place */
            seL4_Word l = msginfo_label(info), len = msginfo_length(info);
            answer(l, len, mr, &by_dry_run);
            info = msginfo(l, 0, len);
        } else
            info = sel4_call(c->ep, info, mr);
        int bad = msginfo_length(info) != mrs || msginfo_label(info) != label;
        for (seL4_Word k = 0; k < mrs; k++)
            bad |= (k < REGISTER_MRS ? mr[k] : get_mr((int)k)) != ~expected(label, (int)k);
        c->bad += (uint32_t)bad;
    }
    c->calls += n;
    return BATCH_END(clock_read(&mach), t0);
}

static uint64_t ipc_batch(void *p, uint32_t n) { return ipc_loop(p, n, 0); }
/* Not inlined into its caller: compiled as ipc_batch is, on its own. */
static __attribute__((noinline)) uint64_t ipc_dry_batch(void *p, uint32_t n) { return ipc_loop(p, n, 1); }

/* The batch loop alone: the harness's work on a system call's case. */
static uint64_t empty_batch(void *p, uint32_t n)
{
    (void)p;
    uint32_t t0 = BATCH_BEGIN(clock_read(&mach));
    for (uint32_t i = 0; i < n; i++)
        asm volatile("" ::: "memory");
    return BATCH_END(clock_read(&mach), t0);
}

static uint64_t yield_batch(void *p, uint32_t n)
{
    (void)p;
    uint32_t t0 = BATCH_BEGIN(clock_read(&mach));
    for (uint32_t i = 0; i < n; i++)
        sel4_yield();
    return BATCH_END(clock_read(&mach), t0);
}

static uint64_t reply_batch(void *p, uint32_t n)
{
    (void)p;
    uint32_t t0 = BATCH_BEGIN(clock_read(&mach));
    for (uint32_t i = 0; i < n; i++)
        sel4_nomsg(SysReply, 0, msginfo(0, 0, 0));
    return BATCH_END(clock_read(&mach), t0);
}
/* ---- the cases ------------------------------------------------------------ */

static char samples_mem[65536];
static seL4_CPtr ep_intra, ep_inter;

/* The batches, in guest instructions. */
static uint64_t instructions(uint64_t counts) { return clock_instructions(&mach, counts); }

static void ipc_case(const struct rows *it, struct span row)
{
    struct span space;
    uint64_t words;
    if (!ipc_case_begin("ipc.sel4-call", it, row, "cross-core: a one-node kernel (CONFIG_MAX_NUM_NODES 1), one CPU", &space, &words))
        return;
    if (words > seL4_MsgMaxLength)
        return case_not("n/a", "one seL4 message carries at most 120 message registers (32-bit words on ARM)");
    struct ipc_ctx c = { span_is(space, "intra") ? ep_intra : ep_inter, (seL4_Word)words, 0, 0, 0 };
    uint32_t served0 = by_server.served, bad0 = by_server.bad;
    uint32_t inner = measure(ipc_batch, &c);
    uint32_t served = by_server.served - served0, calls = c.calls;
    uint64_t dry = ipc_dry_batch(&c, inner);
    if (c.bad || by_server.bad != bad0 || by_dry_run.bad || served != calls)
        return case_not("failed", "a message word came back wrong (checked by the server and the client)");
    fb_kv_u64(&doc, 0, "round_trips", calls);
    fb_kv_u64(&doc, 0, "requests_verified_by_server", served);
    fb_kv_u64(&doc, 0, "message_registers", c.mrs);
    fb_kv_str(&doc, 0, "payload_unit", "32-bit message registers");
    fb_kv_u64(&doc, 0, "harness_batch_cycles", instructions(dry));
    fb_kv_str(&doc, 0, "path", c.mrs <= REGISTER_MRS ? "fastpath (message in registers)" : "slowpath (message registers beyond the four in registers)");
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

/* A system call's case: its batches, and the batch loop alone at the same
 * inner count (the harness's own work). */
static void call_case(const char *id, batch_fn f, const char *path)
{
    uint32_t inner = measure(f, 0);
    case_begin(id);
    fb_kv_u64(&doc, 0, "harness_batch_cycles", instructions(empty_batch(0, inner)));
    fb_kv_str(&doc, 0, "path", path);
    case_ok(inner);
}

static void single_cases(void)
{
    if (planned("syscall.sched_yield"))
        call_case("syscall.sched_yield", yield_batch, "seL4_Yield alone on the CPU");
    if (planned("syscall.null"))
        call_case("syscall.null", reply_batch,
                  "seL4_Reply with nobody to reply to: the kernel finds the reply slot empty and returns (the cheapest kernel entry)");
    if (planned("hermit.sched_yield-busy")) {
        seL4_CPtr t = start_thread(2, seL4_CapInitThreadVSpace, ROLE_YIELDER, 0);
        call_case("hermit.sched_yield-busy", yield_batch,
                  "seL4_Yield with a second thread of the same priority yielding back: two thread switches an operation");
        tcb_suspend(t);
    }
}

/* ---- the root task -------------------------------------------------------- */

static void setup(void)
{
    untyped = largest_untyped(mach.bi);
    ep_intra = retype(seL4_EndpointObject, 0, "retype endpoint");
    start_thread(0, seL4_CapInitThreadVSpace, ROLE_SERVER, ep_intra);
    ep_inter = retype(seL4_EndpointObject, 0, "retype endpoint");
    start_thread(1, second_vspace(), ROLE_SERVER, ep_inter);
}

void root_main(seL4_BootInfo *bootinfo)
{
    struct span mode = { "run", 3 };
    harness_words(oscycles_args);
    word_arg("mode", &mode);
    if (span_is(mode, "no-init"))
        for (;;)
            sel4_yield();
    machine_init(&mach, bootinfo);
    if (span_is(mode, "panic"))
        fail("asked to (mode=panic)", 0);
    frame_send(&serial, "hello", 0, "sel4", 4);
    if (span_is(mode, "hang"))
        for (;;)
            sel4_yield();
    harness.target_batch = clock_batch(&mach, harness.target_batch);
    harness.units = instructions;
    setup();
    doc_begin(samples_mem, sizeof samples_mem, "oscycles-sel4-arm", "seL4 5.0.0 aarch32");
    fb_kv_str(&doc, 0, "board", mach.board->name);
    fb_kv_str(&doc, 0, "clock", mach.board->clock);
    fb_kv_u64(&doc, 0, "clock_hz", mach.board->clock_hz);
    fb_kv_str(&doc, 0, "batch_cycles", "guest instructions (the clock's counts x 10^9 / clock_hz)");
    doc_cases();
    ipc_cases();
    single_cases();
    doc_end();
    frame_send(&serial, "samples", 1, doc.p, doc.len);
    machine_exit(&mach);
}
