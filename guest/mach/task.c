/*
 * oscycles' bootstrap task for GNU Mach (i386): the mach environment's
 * guest (src/run/env/mach.rs). GNU Mach loads it as a multiboot module with
 * the boot-script line
 *   task ${host-port} ${device-port} <key=value...> $(task-create) $(task-resume)
 * so argv[1] and argv[2] name the host-priv and device-master send rights;
 * the rest are the host's words (src/run/env/program/words.rs, read by
 * guest/freestanding/harness.h as every C guest reads them).
 *
 * It says hello as its first act, measures the cases asked for in Mach's
 * own terms (mach_msg RPCs between two threads of this task and between
 * this task and a second one, traps, yields, vm_allocate, first writes),
 * and sends the samples back framed on the console (the mach_print trap)
 * as every oscycles guest frames its documents; then ends the VM with
 * host_reboot (QEMU -no-reboot exits).
 *
 * No libc and no MIG: traps through the i386 call gate (lcall $7,$0, the
 * trap's number in %eax, arguments on the user stack), messages built by
 * hand in the i386 typed-message layout. Times are rdtsc deltas in
 * harness.h's batches: under QEMU's instruction counter guest
 * instructions, else emulated cycles.
 */
#include "mach.h"
#include "../freestanding/harness.h"

/* ------------------------------------------------------------- the output */

static char doc_mem[48 * 1024]; /* the samples document */

#define MAX_WORDS 64

/* ------------------------------------------------------------------ IPC */

/* What word i of message seq carries, one way or the other. */
static inline u32 pattern(u32 seq, u32 i, u32 reply)
{
    return seq * 0x9E3779B1u + i * 0x85EBCA77u + (reply ? 0x5bd1e995u : 0);
}

#define REPLY_BAD 0x40000000
#define SERVER_STOP 0x3fffffff

/* The server: receives a request, checks every word, replies with the same
   number of words and the request's id (REPLY_BAD|id if a word was wrong),
   and receives the next in the same call. Runs until told to stop. */
static void server(mach_port_t port)
{
    u32 buf[8 + 2 * MAX_WORDS];
    mach_msg_header_t *h = (void *)buf;
    kern_return_t r = mach_msg_trap(h, RCV_MSG, 0, sizeof buf, port, 0, 0);
    for (;;) {
        if (r) { r = mach_msg_trap(h, RCV_MSG, 0, sizeof buf, port, 0, 0); continue; }
        u32 seq = (u32)h->id, n = h->size > 24 ? (h->size - 28) / 4 : 0, bad = 0;
        for (u32 i = 0; i < n; i++) bad |= buf[7 + i] ^ pattern(seq, i, 0);
        for (u32 i = 0; i < n; i++) buf[7 + i] = pattern(seq, i, 1);
        h->bits = MSGH_BITS(T_MOVE_SEND_ONCE, 0);
        h->local = 0;
        h->id = (s32)(bad ? (seq | REPLY_BAD) : seq);
        if (seq == SERVER_STOP) {
            mach_msg_trap(h, SEND_MSG, h->size, 0, 0, 0, 0);
            mach_msg_trap(h, RCV_MSG, 0, sizeof buf, mach_reply_port(), 0, 0);   /* forever */
        }
        r = mach_msg_trap(h, SEND_MSG | RCV_MSG, h->size, sizeof buf, port, 0, 0);
    }
}

struct channel {
    mach_port_t port;          /* the server's port: a send right here */
    mach_port_t reply;         /* the client's reply port */
    u32 seq;
    u32 verified;              /* replies whose request the server checked */
};

/* One round trip of `words` 64-bit words each way: 0 if both sides saw
   every word right, else why not. */
static inline const char *round_trip(struct channel *c, u32 *buf, u32 words)
{
    mach_msg_header_t *h = (void *)buf;
    u32 n = 2 * words, size = 24 + (words ? 4 + 4 * n : 0);
    u32 seq = c->seq = c->seq % 0x3ffffffe + 1;
    h->bits = MSGH_BITS(T_COPY_SEND, T_MAKE_SEND_ONCE);
    h->size = size; h->remote = c->port; h->local = c->reply; h->seqno = 0; h->id = (s32)seq;
    if (words) {
        buf[6] = MTYPE(T_INT32, 32, n, 0);
        for (u32 i = 0; i < n; i++) buf[7 + i] = pattern(seq, i, 0);
    }
    if (mach_msg_trap(h, SEND_MSG | RCV_MSG, size, 4 * (8 + 2 * MAX_WORDS), c->reply, 0, 0))
        return "mach_msg failed";
    if ((u32)h->id == (seq | REPLY_BAD)) return "the server saw a wrong word";
    if ((u32)h->id != seq || h->size != size) return "a reply to another request";
    u32 bad = 0;
    for (u32 i = 0; i < n; i++) bad |= buf[7 + i] ^ pattern(seq, i, 1);
    if (bad) return "a wrong word in the reply";
    c->verified++;
    return 0;
}

/* A batch of round trips on a channel; the first wrong one stops it. */
struct ipc_ctx {
    struct channel *c;
    u32 words;
    const char *why;
};

static u64 ipc_batch(void *p, u32 n)
{
    struct ipc_ctx *x = p;
    struct channel *c = x->c;
    u32 buf[8 + 2 * MAX_WORDS], words = x->words;
    const char *why = x->why;
    u64 t0 = BATCH_BEGIN(rdtsc());
    for (u32 i = 0; i < n && !why; i++) why = round_trip(c, buf, words);
    u64 t = BATCH_END(rdtsc(), t0);
    x->why = why;
    return t;
}

/* ---------------------------------------------------------------- traps */

static u64 null_batch(void *p, u32 n)
{
    (void)p;
    u64 t0 = BATCH_BEGIN(rdtsc());
    for (u32 i = 0; i < n; i++) invalid_trap();
    return BATCH_END(rdtsc(), t0);
}

static u64 getpid_batch(void *p, u32 n)
{
    (void)p;
    u64 t0 = BATCH_BEGIN(rdtsc());
    for (u32 i = 0; i < n; i++) mach_task_self();
    return BATCH_END(rdtsc(), t0);
}

static u64 yield_batch(void *p, u32 n)
{
    (void)p;
    u64 t0 = BATCH_BEGIN(rdtsc());
    for (u32 i = 0; i < n; i++) swtch();
    return BATCH_END(rdtsc(), t0);
}

/* vm_allocate + vm_deallocate of 1 MiB; the first failure stops it. */
struct vm_ctx {
    mach_port_t task;
    kern_return_t kr;
};

static u64 malloc_batch(void *p, u32 n)
{
    struct vm_ctx *v = p;
    mach_port_t task = v->task;
    kern_return_t kr = v->kr;
    u64 t0 = BATCH_BEGIN(rdtsc());
    for (u32 i = 0; i < n && !kr; i++) {
        u32 addr = 0;
        kr |= syscall_vm_allocate(task, &addr, 1 << 20, 1);
        kr |= syscall_vm_deallocate(task, addr, 1 << 20);
    }
    u64 t = BATCH_END(rdtsc(), t0);
    v->kr = kr;
    return t;
}

#define PAGES_PER_REGION 256

/* pagefault.anon: n fresh 1 MiB regions, the first write to each of their
   pages timed (the vm_allocate and vm_deallocate around it are not). */
static u64 fault_batch(void *p, u32 n)
{
    struct vm_ctx *v = p;
    u64 sum = 0;
    for (u32 k = 0; k < n && !v->kr; k++) {
        u32 addr = 0;
        if ((v->kr = syscall_vm_allocate(v->task, &addr, 1 << 20, 1))) break;
        u64 t0 = BATCH_BEGIN(rdtsc());
        for (u32 pg = 0; pg < PAGES_PER_REGION; pg++) *(volatile u32 *)(addr + pg * 4096) = pg;
        sum += BATCH_END(rdtsc(), t0);
        syscall_vm_deallocate(v->task, addr, 1 << 20);
    }
    return sum;
}

/* A case without parameters: its batches, or why not. */
static void single_case(const char *bench, batch_fn f, void *ctx, const kern_return_t *kr, const char *why)
{
    u32 inner = measure(f, ctx);
    case_begin(bench);
    if (kr && *kr) return case_not("failed", why);
    case_ok(inner);
}

static volatile u32 yielder_stop;
static void yielder(mach_port_t unused)
{
    (void)unused;
    while (!yielder_stop) swtch();
    u32 buf[8];
    for (;;) mach_msg_trap((void *)buf, RCV_MSG, 0, sizeof buf, mach_reply_port(), 0, 0);
}

static u32 stack_intra[4096] __attribute__((aligned(16)));
static u32 stack_inter[4096] __attribute__((aligned(16)));
static u32 stack_yield[1024] __attribute__((aligned(16)));

static void traps(mach_port_t task)
{
    struct vm_ctx v = { task, 0 };
    if (planned("syscall.null")) single_case("syscall.null", null_batch, 0, 0, 0);
    if (planned("syscall.getpid")) single_case("syscall.getpid", getpid_batch, 0, 0, 0);
    if (planned("syscall.sched_yield")) single_case("syscall.sched_yield", yield_batch, 0, 0, 0);
    if (planned("hermit.malloc-1m"))
        single_case("hermit.malloc-1m", malloc_batch, &v, &v.kr, "vm_allocate or vm_deallocate failed");
    if (planned("pagefault.anon")) {
        v.kr = 0;
        u32 regions = measure(fault_batch, &v);
        case_begin("pagefault.anon");
        if (v.kr) return case_not("failed", "vm_allocate failed");
        fb_kv_u64(&doc, 0, "pages_per_region", PAGES_PER_REGION);
        case_ok(regions * PAGES_PER_REGION);
    }
}

static void yield_busy(mach_port_t task)
{
    mach_port_t th;
    if (!planned("hermit.sched_yield-busy")) return;
    stack_yield[1023] = 0;
    kern_return_t kr = start_thread(task, yielder, stack_yield + 1024, &th);
    if (kr) {
        case_begin("hermit.sched_yield-busy");
        return case_not("failed", "starting the second thread failed");
    }
    single_case("hermit.sched_yield-busy", yield_batch, 0, 0, 0);
    yielder_stop = 1;
}

/* ------------------------------------------------------------- the main */

static mach_port_t host_priv;

static void end_vm(void)
{
    struct { mach_msg_header_t h; u32 ot, opt; } hr;
    memset(&hr, 0, sizeof hr);
    hr.ot = MTYPE(T_INT32, 32, 1, 0);
    hr.opt = 0;                           /* reboot: QEMU -no-reboot exits */
    rpc(&hr, sizeof hr, host_priv, 2635); /* host_reboot */
    for (;;) swtch_pri(0);
}

static kern_return_t new_task(mach_port_t self, mach_port_t *child)
{
    struct { mach_msg_header_t h; u32 it, inherit; } tc;
    memset(&tc, 0, sizeof tc);
    tc.it = MTYPE(T_BOOLEAN, 32, 1, 0);
    tc.inherit = 1;                         /* the child's memory: a copy of ours */
    kern_return_t kr = rpc(&tc, sizeof tc, self, 2007);     /* task_create */
    *child = rpcbuf[9];
    return kr;
}

/* A channel to a server thread in this task, or in a second one (created
   here, after the port's name is on the server's stack: the second task's
   memory is a copy of ours), the port's receive right moved there. */
static kern_return_t open_channel(struct channel *c, mach_port_t self, int other, u32 *stack_top)
{
    mach_port_t th, task = self;
    kern_return_t kr;
    c->port = mach_reply_port();
    c->reply = mach_reply_port();
    c->seq = 0;
    if ((kr = insert_right(self, c->port, c->port, T_MAKE_SEND))) return kr;
    stack_top[-1] = c->port;
    if (other && (kr = new_task(self, &task))) return kr;
    if (other && (kr = insert_right(task, c->port, c->port, T_MOVE_RECEIVE))) return kr;
    return start_thread(task, server, stack_top, &th);
}

/* The channels of the two spaces, opened at their first case. */
static struct channel channels[2];
static kern_return_t channel_state[2] = { -1, -1 }; /* -1: not opened yet */

static void ipc_case(const struct rows *it, struct span row, mach_port_t self)
{
    struct span space;
    uint64_t words;
    if (!ipc_case_begin("ipc.mach-msg", it, row, "cross-core: one CPU: Debian's i386 GNU Mach is a uniprocessor kernel", &space, &words))
        return;
    if (words > MAX_WORDS) return case_not("n/a", "oscycles' GNU Mach task carries at most 64 64-bit words");
    u32 s = span_is(space, "inter");
    if (channel_state[s] == -1)
        channel_state[s] = open_channel(&channels[s], self, (int)s, s ? stack_inter + 4096 : stack_intra + 4096);
    if (channel_state[s]) return case_not("failed", "starting the server failed");
    struct ipc_ctx x = { &channels[s], (u32)words, 0 };
    channels[s].verified = 0;
    u32 inner = measure(ipc_batch, &x);
    if (x.why) return case_not("failed", x.why);
    fb_kv_u64(&doc, 0, "round_trips", channels[s].verified);
    fb_kv_u64(&doc, 0, "requests_verified_by_server", channels[s].verified);
    case_ok(inner);
}

static void ipc_cases(mach_port_t self)
{
    struct rows it;
    struct span row;
    if (planned("ipc.mach-msg") && rows_of("ipc.mach-msg", &it))
        while (next_row(&it, &row)) ipc_case(&it, row, self);
}

/* The host's words: argv[3] on, joined by spaces. */
static char words[8192];

static void join_words(u32 argc, char **argv)
{
    u32 n = 0;
    for (u32 i = 3; i < argc; i++) {
        for (const char *s = argv[i]; *s && n < sizeof words - 2; s++) words[n++] = *s;
        words[n++] = ' ';
    }
    words[n] = 0;
}

static u32 atou(const char *s)
{
    u32 v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + (u32)(*s++ - '0');
    return v;
}

void task_main(u32 *sp)
{
    u32 argc = sp[0];
    char **argv = (char **)(sp + 1);
    struct span mode = { "run", 3 };
    host_priv = argc > 1 ? atou(argv[1]) : 0;
    join_words(argc, argv);
    harness_words(words);
    word_arg("mode", &mode);
    if (span_is(mode, "hang") || span_is(mode, "no-init")) for (;;) swtch_pri(0); /* (tests) no hello, ever */
    frame_send(&console, "hello", 0, "mach", 4);
    rpc_reply = mach_reply_port();
    if (span_is(mode, "fault")) *(volatile u32 *)0 = 0; /* (tests) a task that faults */
    mach_port_t self = mach_task_self();
    doc_begin(doc_mem, sizeof doc_mem, "oscycles-mach", "GNU Mach 1.8 i386");
    doc_cases();
    traps(self);
    ipc_cases(self);
    yield_busy(self);
    doc_end();
    frame_send(&console, "samples", 1, doc.p, doc.len);
    end_vm();
}

__asm__(".text\n.globl _start\n_start:\n\tmovl %esp,%eax\n\tandl $-16,%esp\n\tsubl $12,%esp\n"
        "\tpushl %eax\n\tcall task_main\n1:\tjmp 1b\n");
