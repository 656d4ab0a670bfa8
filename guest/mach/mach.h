/*
 * GNU Mach (i386) from a freestanding 32-bit task: types, traps through the
 * call gate, the typed-message layout, a few RPCs built by hand (msgh_ids
 * from gnumach.msgids; each reply's id is the request's + 100), the console
 * (mach_print) with oscycles' framing. Shared by oscycles' bootstrap task
 * (task.c) and the independent check (check.c).
 */
#ifndef OSCYCLES_MACH_H
#define OSCYCLES_MACH_H

typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef unsigned short u16;
typedef u32 mach_port_t;
typedef s32 kern_return_t;

/* One stub per trap, cdecl: at the lcall the user stack is [return address]
   [arg0] [arg1]...; the kernel copies the arguments from there. */
#define TRAP(name, num) \
    ".globl " #name "\n" #name ":\n\tmovl $" #num ",%eax\n\tlcall $7,$0\n\tret\n"
__asm__(".text\n"
        TRAP(mach_msg_trap, -25)
        TRAP(mach_reply_port, -26)
        TRAP(mach_task_self, -28)
        TRAP(mach_print, -30)
        TRAP(invalid_trap, -31)        /* kern_invalid: the bare entry and exit */
        TRAP(swtch_pri, -59)
        TRAP(swtch, -60)
        TRAP(syscall_vm_allocate, -65)
        TRAP(syscall_vm_deallocate, -66));

kern_return_t mach_msg_trap(void *msg, u32 option, u32 send_size, u32 rcv_size,
                            mach_port_t rcv_name, u32 timeout, mach_port_t notify);
mach_port_t mach_reply_port(void);
mach_port_t mach_task_self(void);
void mach_print(const char *s);
kern_return_t invalid_trap(void);
kern_return_t swtch_pri(int pri);
kern_return_t swtch(void);
kern_return_t syscall_vm_allocate(mach_port_t task, u32 *addr, u32 size, int anywhere);
kern_return_t syscall_vm_deallocate(mach_port_t task, u32 addr, u32 size);

typedef struct {
    u32 bits, size;
    mach_port_t remote, local;
    u32 seqno;
    s32 id;
} mach_msg_header_t;                     /* 24 bytes on i386 */

/* mach_msg_type_t: name:8 size:8 number:12 inline:1 longform:1 dealloc:1 */
#define MTYPE(name, bits, number, longform) \
    ((u32)(name) | ((u32)(bits) << 8) | ((u32)(number) << 16) | (1u << 28) | ((u32)(longform) << 29))
#define T_BOOLEAN 0
#define T_INT32 2
#define T_PORT_NAME 15
#define T_MOVE_RECEIVE 16
#define T_MOVE_SEND_ONCE 18
#define T_COPY_SEND 19
#define T_MAKE_SEND 20
#define T_MAKE_SEND_ONCE 21
#define MSGH_BITS(r, l) ((r) | ((l) << 8))
#define MSGH_COMPLEX 0x80000000u
#define SEND_MSG 1
#define RCV_MSG 2

static void *memset(void *d, int c, u32 n)
{
    char *p = d;
    while (n--) *p++ = (char)c;
    return d;
}
static void *memcpy(void *d, const void *s, u32 n)
{
    char *p = d;
    const char *q = s;
    while (n--) *p++ = *q++;
    return d;
}
/* 64/32 division without libgcc */
static u64 udiv(u64 n, u32 d, u32 *rem)
{
    u32 hi = (u32)(n >> 32), lo = (u32)n, qhi = hi / d, r = hi % d, qlo;
    __asm__("divl %4" : "=a"(qlo), "=d"(r) : "a"(lo), "d"(r), "rm"(d));
    if (rem) *rem = r;
    return ((u64)qhi << 32) | qlo;
}
static inline u64 rdtsc(void)
{
    u32 lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((u64)hi << 32) | lo;
}

/* ------------------------------------------------------------------ RPC */

static u32 rpcbuf[512];
static mach_port_t rpc_reply;

/* Sends `req` to `dest` (COPY_SEND, a send-once reply right) and receives
   the reply into rpcbuf: the mach_msg error, or the reply's RetCode (word
   7); its first out value is word 9. */
static kern_return_t rpc(void *req, u32 size, mach_port_t dest, s32 id)
{
    mach_msg_header_t *h = (void *)rpcbuf;
    if (!rpc_reply) rpc_reply = mach_reply_port();
    memcpy(rpcbuf, req, size);
    h->bits |= MSGH_BITS(T_COPY_SEND, T_MAKE_SEND_ONCE);
    h->size = size; h->remote = dest; h->local = rpc_reply; h->seqno = 0; h->id = id;
    kern_return_t r = mach_msg_trap(h, SEND_MSG | RCV_MSG, size, sizeof rpcbuf, rpc_reply, 0, 0);
    if (r) return r;
    if (h->id != id + 100) return -2;
    return (kern_return_t)rpcbuf[7];
}

/* mach_port_insert_right(space, name, right, how) */
static kern_return_t insert_right(mach_port_t space, mach_port_t name, mach_port_t right, u32 how)
{
    struct { mach_msg_header_t h; u32 nameType, name, polyType, poly; } q;
    memset(&q, 0, sizeof q);
    q.h.bits = MSGH_COMPLEX;
    q.nameType = MTYPE(T_PORT_NAME, 32, 1, 0); q.name = name;
    q.polyType = MTYPE(how, 32, 1, 0); q.poly = right;
    return rpc(&q, sizeof q, space, 3215);
}

/* A thread in `task` running fn(stack_top[-1]) on the stack below
   stack_top (memory that holds the argument in that task):
   thread_create, thread_set_state (i386_THREAD_STATE), thread_resume. */
static kern_return_t start_thread(mach_port_t task, void (*fn)(mach_port_t), u32 *stack_top, mach_port_t *thread)
{
    struct { mach_msg_header_t h; } q0;
    memset(&q0, 0, sizeof q0);
    kern_return_t r = rpc(&q0, sizeof q0, task, 2061);       /* thread_create */
    if (r) return r;
    *thread = rpcbuf[9];
    struct { mach_msg_header_t h; u32 flavorType; s32 flavor; u32 stateType; u32 st[17]; } q1;
    memset(&q1, 0, sizeof q1);
    q1.flavorType = MTYPE(T_INT32, 32, 1, 0);
    q1.flavor = 1;
    q1.stateType = MTYPE(T_INT32, 32, 17, 0);
    /* gs fs es ds edi esi ebp esp ebx edx ecx eax eip cs efl uesp ss */
    q1.st[12] = (u32)fn;
    q1.st[14] = 0x202;
    q1.st[15] = (u32)(stack_top - 2);       /* [no return address][arg] */
    if ((r = rpc(&q1, sizeof q1, *thread, 2018))) return r;  /* thread_set_state */
    struct { mach_msg_header_t h; } q2;
    memset(&q2, 0, sizeof q2);
    return rpc(&q2, sizeof q2, *thread, 2063);                /* thread_resume */
}

/* -------------------------------------------------------------- console */
/* oscycles' framing (guest/freestanding/frame.h) onto the console: the
   characters gathered into lines, each printed by the mach_print trap. */

#include "../freestanding/frame.h"

static char console_line[256];
static u32 console_len;

static void console_put(char c, void *unused)
{
    (void)unused;
    console_line[console_len++] = c;
    if (c == '\n' || console_len == sizeof console_line - 1) {
        console_line[console_len] = 0;
        mach_print(console_line);
        console_len = 0;
    }
}

static const struct frame_out console = { console_put, 0 };

#endif
