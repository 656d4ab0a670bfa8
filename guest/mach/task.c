/*
 * oscycles' bootstrap task for GNU Mach (i386): the mach environment's
 * guest (src/run/env/mach.rs). GNU Mach loads it as a multiboot module with
 * the boot-script line
 *   task ${host-port} ${device-port} <key=value...> $(task-create) $(task-resume)
 * so argv[1] and argv[2] name the host-priv and device-master send rights;
 * the rest is what the host asks (see `struct args`).
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
 * hand in the i386 typed-message layout. Times are rdtsc deltas: under
 * QEMU's instruction counter guest instructions, else emulated cycles.
 */
#include "mach.h"

/* ------------------------------------------------------------- the output */

static char doc_mem[48 * 1024];     /* the samples document */
static struct frame_buf doc;

/* ------------------------------------------------------- what is asked */

#define MAX_WORDS 64
#define MAX_LIST 8

struct args {
    const char *mode;          /* run | hang | fault */
    u32 words[MAX_LIST], nwords;   /* ipc payloads, 64-bit words */
    int intra, inter;          /* ipc spaces */
    int getpid, null, yield, yield_busy, malloc, fault;
    u32 batches;
    u32 inner_ipc, inner_sys, inner_vm;
};

static u32 atou(const char *s)
{
    u32 v = 0;
    while (*s >= '0' && *s <= '9') v = v * 10 + (u32)(*s++ - '0');
    return v;
}
static int prefix(const char *s, const char *p)
{
    while (*p) if (*s++ != *p++) return 0;
    return 1;
}
static int same(const char *a, const char *b)
{
    while (*a && *a == *b) a++, b++;
    return *a == *b;
}

/* `words=0/1/2`: the numbers, at most MAX_LIST, each at most MAX_WORDS */
static void list(const char *s, u32 *out, u32 *n)
{
    *n = 0;
    while (*s && *n < MAX_LIST) {
        u32 v = atou(s);
        if (v <= MAX_WORDS) out[(*n)++] = v;
        while (*s && *s != '/') s++;
        if (*s == '/') s++;
    }
}
/* whether the '/'-separated list `s` holds `w` */
static int has(const char *s, const char *w)
{
    while (*s) {
        const char *p = w, *q = s;
        while (*p && *q == *p) p++, q++;
        if (!*p && (*q == '/' || !*q)) return 1;
        while (*s && *s != '/') s++;
        if (*s == '/') s++;
    }
    return 0;
}

static void parse(struct args *a, u32 argc, char **argv)
{
    a->mode = "run";
    a->batches = 11; a->inner_ipc = 1000; a->inner_sys = 10000; a->inner_vm = 100;
    for (u32 i = 3; i < argc; i++) {
        const char *w = argv[i];
        if (prefix(w, "mode=")) a->mode = w + 5;
        else if (prefix(w, "words=")) list(w + 6, a->words, &a->nwords);
        else if (prefix(w, "space=")) { a->intra = has(w + 6, "intra"); a->inter = has(w + 6, "inter"); }
        else if (prefix(w, "sys=")) {
            const char *s = w + 4;
            a->getpid = has(s, "getpid"); a->null = has(s, "null"); a->yield = has(s, "yield");
            a->yield_busy = has(s, "yield-busy"); a->malloc = has(s, "malloc"); a->fault = has(s, "fault");
        }
        else if (prefix(w, "batches=")) a->batches = atou(w + 8);
        else if (prefix(w, "inner_ipc=")) a->inner_ipc = atou(w + 10);
        else if (prefix(w, "inner_sys=")) a->inner_sys = atou(w + 10);
        else if (prefix(w, "inner_vm=")) a->inner_vm = atou(w + 9);
    }
    if (a->batches == 0 || a->batches > 64) a->batches = 11;
    if (!a->inner_ipc) a->inner_ipc = 1;
    if (!a->inner_sys) a->inner_sys = 1;
    if (!a->inner_vm) a->inner_vm = 1;
}

/* ------------------------------------------------------------ the cases */

static u32 ncases;
static u64 samples[64];

/* One case's answer, as src/run/env/program.rs reads it: `{"benchmark":..,
   "params":{..},"status":"ok","inner":n,"batch_cycles":[..], extra}` or
   failed with the reason. The caller adds the extra fields and the `}`. */
static void begin_case(const char *bench, const char *params)
{
    fb_case_begin(&doc, !ncases++, bench);
    if (params) { fb_params_begin(&doc); fb_raw(&doc, params); fb_obj_end(&doc); }
}
static void ok_case(u32 batches, u32 inner)
{
    fb_kv_str(&doc, 0, "status", "ok");
    fb_kv_u64(&doc, 0, "inner", inner);
    fb_kv_u64s(&doc, 0, "batch_cycles", samples, batches);
}
static void failed_case(const char *why)
{
    fb_case_not(&doc, "failed", why);
}

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

static void ipc_case(struct channel *c, const char *space, u32 words, const struct args *a)
{
    u32 buf[8 + 2 * MAX_WORDS];
    const char *why = 0;
    char params[96];
    u32 p = 0;
    const char *parts[] = { "\"words\":", 0, ",\"space\":\"", space, "\",\"cores\":\"same\"" };
    char num[4] = { 0 };
    if (words >= 10) { num[0] = (char)('0' + words / 10); num[1] = (char)('0' + words % 10); }
    else num[0] = (char)('0' + words);
    parts[1] = num;
    for (u32 k = 0; k < 5; k++) for (const char *s = parts[k]; *s && p < sizeof params - 1; s++) params[p++] = *s;
    params[p] = 0;
    begin_case("ipc.mach-msg", params);
    c->verified = 0;
    for (u32 i = 0; i < 64 && !why; i++) why = round_trip(c, buf, words);   /* warm-up */
    for (u32 b = 0; b < a->batches && !why; b++) {
        u64 t0 = rdtsc();
        for (u32 i = 0; i < a->inner_ipc && !why; i++) why = round_trip(c, buf, words);
        samples[b] = rdtsc() - t0;
    }
    if (why) { failed_case(why); return; }
    ok_case(a->batches, a->inner_ipc);
    fb_kv_u64(&doc, 0, "round_trips", c->verified);
    fb_kv_u64(&doc, 0, "requests_verified_by_server", c->verified);
    fb_obj_end(&doc);
}

/* ---------------------------------------------------------------- traps */

#define TIMED(bench, inner, body) do { \
        begin_case(bench, 0); \
        for (u32 b = 0; b < a->batches; b++) { \
            u64 t0 = rdtsc(); \
            for (u32 i = 0; i < (inner); i++) { body; } \
            samples[b] = rdtsc() - t0; \
        } \
        ok_case(a->batches, (inner)); fb_obj_end(&doc); \
    } while (0)

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

static void traps(const struct args *a, mach_port_t task)
{
    if (a->null) TIMED("syscall.null", a->inner_sys, invalid_trap());
    if (a->getpid) TIMED("syscall.getpid", a->inner_sys, mach_task_self());
    if (a->yield) TIMED("syscall.sched_yield", a->inner_sys, swtch());
    if (a->malloc) {
        kern_return_t kr = 0;
        begin_case("hermit.malloc-1m", 0);
        for (u32 b = 0; b < a->batches && !kr; b++) {
            u64 t0 = rdtsc();
            for (u32 i = 0; i < a->inner_vm && !kr; i++) {
                u32 addr = 0;
                kr |= syscall_vm_allocate(task, &addr, 1 << 20, 1);
                kr |= syscall_vm_deallocate(task, addr, 1 << 20);
            }
            samples[b] = rdtsc() - t0;
        }
        if (kr) failed_case("vm_allocate or vm_deallocate failed");
        else { ok_case(a->batches, a->inner_vm); fb_obj_end(&doc); }
    }
    if (a->fault) {
        /* pagefault.anon: the first write to each page of a fresh 1 MiB region */
        begin_case("pagefault.anon", 0);
        kern_return_t kr = 0;
        for (u32 b = 0; b < a->batches && !kr; b++) {
            samples[b] = 0;
            for (u32 k = 0; k < a->inner_vm / 16 + 1 && !kr; k++) {
                u32 addr = 0;
                kr = syscall_vm_allocate(task, &addr, 1 << 20, 1);
                if (kr) break;
                u64 t0 = rdtsc();
                for (u32 pg = 0; pg < 256; pg++) *(volatile u32 *)(addr + pg * 4096) = pg;
                samples[b] += rdtsc() - t0;
                syscall_vm_deallocate(task, addr, 1 << 20);
            }
        }
        if (kr) failed_case("vm_allocate failed");
        else { ok_case(a->batches, (a->inner_vm / 16 + 1) * 256); fb_kv_u64(&doc, 0, "pages_per_region", 256); fb_obj_end(&doc); }
    }
}

static void yield_busy(const struct args *a, mach_port_t task)
{
    mach_port_t th;
    stack_yield[1023] = 0;
    kern_return_t kr = start_thread(task, yielder, stack_yield + 1024, &th);
    if (kr) { begin_case("hermit.sched_yield-busy", 0); failed_case("starting the second thread failed"); return; }
    TIMED("hermit.sched_yield-busy", a->inner_sys, swtch());
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

static void ipc_cases(const struct args *a, mach_port_t self)
{
    const char *spaces[2] = { "intra", "inter" };
    int want[2] = { a->intra, a->inter };
    for (u32 s = 0; s < 2; s++) {
        if (!want[s] || !a->nwords) continue;
        struct channel c;
        kern_return_t kr = open_channel(&c, self, s == 1, s ? stack_inter + 4096 : stack_intra + 4096);
        for (u32 w = 0; w < a->nwords; w++) {
            if (kr) { begin_case("ipc.mach-msg", 0); failed_case("starting the server failed"); break; }
            ipc_case(&c, spaces[s], a->words[w], a);
        }
    }
}

void task_main(u32 *sp)
{
    u32 argc = sp[0];
    char **argv = (char **)(sp + 1);
    struct args a;
    memset(&a, 0, sizeof a);
    host_priv = argc > 1 ? atou(argv[1]) : 0;
    parse(&a, argc, argv);
    if (same(a.mode, "hang")) for (;;) swtch_pri(0);        /* (tests) no hello, ever */
    frame_send(&console, "hello", 0, "mach", 4);
    rpc_reply = mach_reply_port();
    if (same(a.mode, "fault")) *(volatile u32 *)0 = 0;       /* (tests) a task that faults */
    mach_port_t self = mach_task_self();
    fb_init(&doc, doc_mem, sizeof doc_mem);
    fb_raw(&doc, "{\"program\":\"oscycles-mach\",\"cases\":[");
    traps(&a, self);
    ipc_cases(&a, self);
    if (a.yield_busy) yield_busy(&a, self);
    fb_raw(&doc, "]}");
    if (doc.overflow)
        fb_error_doc(&doc, doc_mem, sizeof doc_mem, "oscycles-mach", "the document outgrew its buffer");
    frame_send(&console, "samples", 1, doc.p, doc.len);
    end_vm();
}

__asm__(".text\n.globl _start\n_start:\n\tmovl %esp,%eax\n\tandl $-16,%esp\n\tsubl $12,%esp\n"
        "\tpushl %eax\n\tcall task_main\n1:\tjmp 1b\n");
