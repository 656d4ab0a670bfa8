/*
 * The independent check of the mach environment: a few lines around 10^5
 * mach_msg round trips of an empty message between two threads of this
 * task, timed by rdtsc around the whole loop (no harness, no batches),
 * printed as `mach-check ...`; then host_reboot. The kernel counters'
 * marks (marks.h: no-ops without the plugin) right outside the rdtsc pair.
 */
#include "mach.h"
#include "../freestanding/marks.h"

static u32 stack[1024] __attribute__((aligned(16)));

static void echo(mach_port_t port)
{
    mach_msg_header_t h;
    mach_msg_trap(&h, RCV_MSG, 0, sizeof h, port, 0, 0);
    for (;;) {
        h.bits = MSGH_BITS(T_MOVE_SEND_ONCE, 0);
        h.local = 0;
        mach_msg_trap(&h, SEND_MSG | RCV_MSG, sizeof h, sizeof h, port, 0, 0);
    }
}

static void line(const char *k, u64 v)
{
    char b[64], d[24];
    u32 p = 0;
    while (*k) b[p++] = *k++;
    size_t n = frame_u64_text(v, d);
    for (size_t i = 0; i <= n; i++) b[p++] = d[i]; /* with its NUL */
    mach_print(b);
}

void check_main(u32 *sp)
{
    enum { N = 100000 };
    mach_port_t self = mach_task_self(), port = mach_reply_port(), reply = mach_reply_port(), th;
    mach_port_t host = 0;
    for (const char *s = ((char **)(sp + 1))[1]; *s; s++) host = host * 10 + (u32)(*s - '0');
    insert_right(self, port, port, T_MAKE_SEND);
    stack[1023] = port;
    start_thread(self, echo, stack + 1024, &th);
    mach_msg_header_t h;
    u64 t0 = 0;
    for (u32 i = 0; i < N + 1000; i++) {
        if (i == 1000) {
            MARK_BEGIN();
            t0 = rdtsc();
        }
        h.bits = MSGH_BITS(T_COPY_SEND, T_MAKE_SEND_ONCE);
        h.size = sizeof h; h.remote = port; h.local = reply; h.id = 1;
        mach_msg_trap(&h, SEND_MSG | RCV_MSG, sizeof h, sizeof h, reply, 0, 0);
    }
    u64 t = rdtsc() - t0;
    MARK_END();
    line("mach-check round_trips=", N);
    line(" total=", t);
    line(" round_trip_x1000=", udiv(t * 1000, N, 0));
    mach_print("\n");
    struct { mach_msg_header_t h; u32 ot, opt; } hr;
    memset(&hr, 0, sizeof hr);
    hr.ot = MTYPE(T_INT32, 32, 1, 0);
    rpc(&hr, sizeof hr, host, 2635);                         /* host_reboot */
    for (;;) swtch_pri(0);
}

__asm__(".text\n.globl _start\n_start:\n\tmovl %esp,%eax\n\tandl $-16,%esp\n\tsubl $12,%esp\n"
        "\tpushl %eax\n\tcall check_main\n1:\tjmp 1b\n");
