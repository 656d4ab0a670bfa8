/*
 * oscycles' seL4 root task (ia32, freestanding): booted by `oscycles run
 * --env sel4` as QEMU's multiboot module beside the seL4 5.0.0 kernel. It
 * says hello as its first act, reads the plan the host wrote into its image
 * (oscycles_args: the key=value words of src/run/env/program.rs), measures
 * the cases it knows with rdtsc in batches (the harness's doubling to the
 * target batch, then the batches), sends their samples framed over COM1
 * (guest/freestanding/frame.h, one IOPort invocation a character), and ends
 * QEMU through isa-debug-exit.
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
#include "../freestanding/frame.h"
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

static void say(const char *s) { frame_puts(&serial, s); }

static void qemu_exit(uint8_t code)
{
    ioport_out8(0xf4, code);
    for (;;)
        sel4_yield();
}

static void fail(const char *what, seL4_Word err)
{
    char num[21];
    say("\noscycles-sel4: FAILED ");
    say(what);
    say(" error ");
    frame_u64_text(err, num);
    say(num);
    say("\n");
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

/* ---- the harness --------------------------------------------------------- */

#define MAX_BATCHES 64
static uint64_t target_batch = 10000000;
static uint32_t batches = 11, fixed_inner;

typedef uint64_t (*batch_fn)(void *ctx, uint32_t n);

/* Doubles the inner count until a batch takes the target (or takes the
 * fixed one), then times the batches; the inner count. */
static uint32_t measure(batch_fn f, void *ctx, uint64_t *out)
{
    uint32_t n = fixed_inner ? fixed_inner : 1;
    f(ctx, n);
    while (!fixed_inner && n < (1u << 24) && f(ctx, n) < target_batch)
        n *= 2;
    for (uint32_t b = 0; b < batches; b++)
        out[b] = f(ctx, n);
    return n;
}

struct ipc_ctx {
    seL4_CPtr ep;
    seL4_Word mrs, seq;
    uint32_t bad, calls;
};

static uint64_t ipc_batch(void *p, uint32_t n)
{
    struct ipc_ctx *c = p;
    seL4_Word mrs = c->mrs;
    uint64_t t0 = rdtsc();
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
    return rdtsc() - t0;
}

static uint64_t yield_batch(void *p, uint32_t n)
{
    (void)p;
    uint64_t t0 = rdtsc();
    for (uint32_t i = 0; i < n; i++)
        sel4_yield();
    return rdtsc() - t0;
}

static uint64_t reply_batch(void *p, uint32_t n)
{
    (void)p;
    uint64_t t0 = rdtsc();
    for (uint32_t i = 0; i < n; i++)
        sel4_nomsg(SysReply, 0, msginfo(0, 0, 0));
    return rdtsc() - t0;
}

/* ---- the plan and the answer ------------------------------------------- */

static char samples_mem[65536];
static struct frame_buf out;
static int first_case = 1;
static uint64_t batch_out[MAX_BATCHES];

static int streq(const char *a, const char *b, int n)
{
    for (int i = 0; i < n; i++)
        if (a[i] != b[i] || !b[i])
            return 0;
    return b[n] == 0;
}

/* The value of `key=` among the words of the plan: its start and length. */
static const char *arg(const char *key, int *len)
{
    const char *p = oscycles_args;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        const char *eq = w;
        while (eq < p && *eq != '=')
            eq++;
        if (eq < p && streq(w, key, (int)(eq - w))) {
            *len = (int)(p - eq - 1);
            return eq + 1;
        }
    }
    return 0;
}

static uint64_t number(const char *s, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n && s[i] >= '0' && s[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(s[i] - '0');
    return v;
}

/* Whether benchmark `id` is in the plan's benches= list. */
static int planned(const char *id)
{
    int n;
    const char *b = arg("benches", &n);
    for (int i = 0; b && i < n;) {
        int j = i;
        while (j < n && b[j] != ',')
            j++;
        if (streq(b + i, id, j - i))
            return 1;
        i = j + 1;
    }
    return 0;
}

static void case_begin(const char *id)
{
    fb_case_begin(&out, first_case, id);
    first_case = 0;
}

static void case_ok(uint32_t inner)
{
    fb_case_ok(&out, inner, batch_out, batches);
}

/* ---- the cases ------------------------------------------------------------ */

static seL4_CPtr ep_intra, ep_inter;

/* A field of a row `a/b/c` of the case list: the i-th, its length. */
static const char *field(const char *row, int len, int i, int *flen)
{
    const char *p = row, *end = row + len;
    for (; i > 0 && p < end; p++)
        if (*p == '/')
            i--;
    const char *q = p;
    while (q < end && *q != '/')
        q++;
    *flen = (int)(q - p);
    return p;
}

/* The params object of a row: each name with its value (a number when all
 * digits, else a string), as the host planned them. */
static void echo_params(const char *names, int nlen, const char *row, int rlen)
{
    char name[32], value[32];
    fb_params_begin(&out);
    for (int i = 0;; i++) {
        int kl, vl;
        const char *k = field(names, nlen, i, &kl), *v = field(row, rlen, i, &vl);
        if (kl == 0 || kl >= 32 || vl >= 32)
            break;
        for (int j = 0; j < kl; j++)
            name[j] = k[j];
        name[kl] = 0;
        int digits = vl > 0;
        for (int j = 0; j < vl; j++) {
            value[j] = v[j];
            digits &= v[j] >= '0' && v[j] <= '9';
        }
        value[vl] = 0;
        if (digits)
            fb_kv_u64(&out, i == 0, name, number(v, vl));
        else
            fb_kv_str(&out, i == 0, name, value);
    }
    fb_obj_end(&out);
}

/* The value of parameter `key` in a row, given the names. */
static const char *param(const char *names, int nlen, const char *row, int rlen, const char *key, int *vl)
{
    for (int i = 0;; i++) {
        int kl;
        const char *k = field(names, nlen, i, &kl);
        if (kl == 0)
            return 0;
        if (streq(k, key, kl))
            return field(row, rlen, i, vl);
    }
}

static void ipc_case(const char *names, int nlen, const char *row, int rlen)
{
    int sl, cl, wl;
    const char *space = param(names, nlen, row, rlen, "space", &sl);
    const char *cores = param(names, nlen, row, rlen, "cores", &cl);
    const char *w = param(names, nlen, row, rlen, "words", &wl);
    case_begin("ipc.sel4-call");
    echo_params(names, nlen, row, rlen);
    if (!space || !cores || !w)
        return fb_case_not(&out, "failed", "the case names no space, cores or words");
    if (!streq(cores, "same", cl))
        return fb_case_not(&out, "n/a", "cross-core: a one-node kernel (CONFIG_MAX_NUM_NODES 1), one CPU");
    uint64_t words = number(w, wl);
    if (2 * words > seL4_MsgMaxLength)
        return fb_case_not(&out, "n/a", "one seL4 message carries at most 120 message registers (60 64-bit words on ia32)");
    struct ipc_ctx c = { streq(space, "intra", sl) ? ep_intra : ep_inter, (seL4_Word)(2 * words), 0, 0, 0 };
    uint32_t served0 = served, bad0 = served_bad;
    uint32_t inner = measure(ipc_batch, &c, batch_out);
    uint32_t by_server = served - served0;
    if (c.bad || served_bad != bad0 || by_server != c.calls)
        return fb_case_not(&out, "failed", "a message word came back wrong (checked by the server and the client)");
    fb_kv_u64(&out, 0, "round_trips", c.calls);
    fb_kv_u64(&out, 0, "requests_verified_by_server", by_server);
    fb_kv_u64(&out, 0, "message_registers", c.mrs);
    fb_kv_str(&out, 0, "path", c.mrs <= 2 ? "fastpath (message in registers)" : "slowpath (message registers beyond the two in registers)");
    case_ok(inner);
}

static void ipc_cases(void)
{
    int n;
    const char *list = arg("cases.ipc.sel4-call", &n);
    if (!list)
        return;
    int nlen = 0;
    while (nlen < n && list[nlen] != ':')
        nlen++;
    for (int i = nlen + 1; i < n;) {
        int j = i;
        while (j < n && list[j] != ':')
            j++;
        ipc_case(list, nlen, list + i, j - i);
        i = j + 1;
    }
}

static void single_cases(void)
{
    uint32_t inner;
    if (planned("syscall.sched_yield")) {
        inner = measure(yield_batch, 0, batch_out);
        case_begin("syscall.sched_yield");
        fb_kv_str(&out, 0, "path", "seL4_Yield alone on the CPU");
        case_ok(inner);
    }
    if (planned("syscall.null")) {
        inner = measure(reply_batch, 0, batch_out);
        case_begin("syscall.null");
        fb_kv_str(&out, 0, "path", "seL4_Reply with nobody to reply to: the kernel finds the reply slot empty and returns (the cheapest kernel entry)");
        case_ok(inner);
    }
    if (planned("hermit.sched_yield-busy")) {
        seL4_CPtr t = start_thread(2, seL4_CapInitThreadVSpace, ROLE_YIELDER, 0);
        inner = measure(yield_batch, 0, batch_out);
        tcb_suspend(t);
        case_begin("hermit.sched_yield-busy");
        fb_kv_str(&out, 0, "path", "seL4_Yield with a second thread of the same priority yielding back: two thread switches an operation");
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
    int n;
    const char *v;
    bi = bootinfo;
    v = arg("mode", &n);
    if (v && streq(v, "no-init", n))
        for (;;)
            sel4_yield();
    if (v && streq(v, "panic", n))
        qemu_exit(1);
    frame_send(&serial, "hello", 0, "sel4", 4);
    if (v && streq(v, "hang", n))
        for (;;)
            sel4_yield();
    if ((v = arg("batch_cycles", &n)) && number(v, n))
        target_batch = number(v, n);
    if ((v = arg("batches", &n)) && number(v, n))
        batches = (uint32_t)number(v, n) < MAX_BATCHES ? (uint32_t)number(v, n) : MAX_BATCHES;
    if ((v = arg("inner", &n)))
        fixed_inner = (uint32_t)number(v, n);
    setup();
    fb_init(&out, samples_mem, sizeof samples_mem);
    fb_raw(&out, "{\"program\":\"oscycles-sel4\",\"kernel\":\"seL4 5.0.0 ia32\",\"tsc_mhz_bootinfo\":");
    fb_u64(&out, bi->archInfo);
    fb_raw(&out, ",\"cases\":[");
    if (planned("ipc.sel4-call"))
        ipc_cases();
    single_cases();
    fb_raw(&out, "]}");
    if (out.overflow)
        fb_error_doc(&out, samples_mem, sizeof samples_mem, "oscycles-sel4", "the samples outgrew their buffer");
    frame_send(&serial, "samples", 1, out.p, out.len);
    qemu_exit(0);
}
