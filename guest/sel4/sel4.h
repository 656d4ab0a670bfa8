/*
 * sel4.h: the part of seL4 5.0.0's ia32 user ABI that oscycles' root task
 * uses, written for it (no libsel4 build): the sysenter system calls, the
 * IPC buffer through %fs, the boot info, and the few object invocations.
 *
 * The numbers are seL4 5.0.0's for the configuration scripts/setup-sel4
 * builds (guest/sel4/autoconf-ia32-release.h: one node, no VT-x, no
 * hardware debug API): the invocation labels in the order of the kernel's
 * generated api/invocation.h and arch/api/invocation.h, the object types of
 * libsel4's object_types.h, the boot info of bootinfo_types.h.
 *
 * System calls (kernel src/arch/x86/32/traps.S, libsel4 sel4_arch syscalls.h):
 *   EAX = the call (below), EBX = capability / badge, ESI = message info,
 *   EDI = MR0, EBP = MR1, ECX = user ESP, EDX = the return EIP (the kernel
 *   returns past the sysenter). MR2 and up are in the IPC buffer.
 */
#ifndef OSCYCLES_SEL4_H
#define OSCYCLES_SEL4_H

#include <stdint.h>

typedef uint32_t seL4_Word;
typedef seL4_Word seL4_CPtr;

enum {
    SysCall = -1, SysReplyRecv = -2, SysSend = -3, SysNBSend = -4,
    SysRecv = -5, SysReply = -6, SysYield = -7, SysNBRecv = -8,
};

/* The root CNode's fixed slots. */
enum {
    seL4_CapInitThreadTCB = 1, seL4_CapInitThreadCNode = 2, seL4_CapInitThreadVSpace = 3,
    seL4_CapInitThreadASIDPool = 6, seL4_CapIOPort = 7,
};

enum {
    seL4_UntypedObject = 0, seL4_TCBObject = 1, seL4_EndpointObject = 2, seL4_NotificationObject = 3,
    seL4_CapTableObject = 4, seL4_X86_4K = 5, seL4_X86_LargePageObject = 6, seL4_X86_PageTableObject = 7,
    seL4_X86_PageDirectoryObject = 8,
};

/* Invocation labels (api, then arch). */
enum {
    UntypedRetype = 1, TCBWriteRegisters = 3, TCBConfigure = 5, TCBSuspend = 10, TCBResume = 11,
    CNodeRevoke = 14, CNodeDelete = 15, CNodeCopy = 17,
    X86PageTableMap = 31, X86PageMap = 35, X86PageUnmap = 37, X86ASIDPoolAssign = 41, X86IOPortOut8 = 45,
};

#define seL4_AllRights 7u
#define seL4_MsgMaxLength 120u
/* GDT entry 7, ring 3: the segment whose base the kernel sets to the IPC buffer. */
#define IPCBUF_GDT_SELECTOR 0x3bu

typedef struct { seL4_Word start, end; } seL4_SlotRegion;
typedef struct __attribute__((packed)) {
    seL4_Word paddr;
    uint8_t padding1, padding2, sizeBits, isDevice;
} seL4_UntypedDesc;
typedef struct __attribute__((packed)) {
    seL4_Word extraLen, nodeID, numNodes, numIOPTLevels;
    void *ipcBuffer;
    seL4_SlotRegion empty, sharedFrames, userImageFrames, userImagePaging, ioSpaceCaps, extraBIPages;
    uint8_t initThreadCNodeSizeBits;
    seL4_Word initThreadDomain, archInfo;
    seL4_SlotRegion untyped;
    seL4_UntypedDesc untypedList[];
} seL4_BootInfo;

static inline seL4_Word msginfo(seL4_Word label, seL4_Word extra_caps, seL4_Word length)
{
    return (label << 12) | ((extra_caps & 3) << 7) | (length & 0x7f);
}
static inline seL4_Word msginfo_label(seL4_Word mi) { return mi >> 12; }
static inline seL4_Word msginfo_length(seL4_Word mi) { return mi & 0x7f; }

/* seL4_IPCBuffer: tag, msg[120], userData, caps_or_badges[3], ... */
static inline void set_mr(int i, seL4_Word v)
{
    asm volatile("movl %0, %%fs:4(,%1,4)" ::"r"(v), "r"(i) : "memory");
}
static inline seL4_Word get_mr(int i)
{
    seL4_Word v;
    asm volatile("movl %%fs:4(,%1,4), %0" : "=r"(v) : "r"(i) : "memory");
    return v;
}
static inline void set_cap(int i, seL4_CPtr c)
{
    asm volatile("movl %0, %%fs:488(,%1,4)" ::"r"(c), "r"(i) : "memory");
}

/* seL4_Call: MR0/MR1 in registers, in and out. */
static inline seL4_Word sel4_call(seL4_CPtr dest, seL4_Word info, seL4_Word *mr0, seL4_Word *mr1)
{
    seL4_Word out, m0 = *mr0, m1 = *mr1;
    asm volatile("pushl %%ebp\n\tmovl %%ecx, %%ebp\n\tmovl %%esp, %%ecx\n\tleal 1f, %%edx\n1:\n\tsysenter\n\t"
                 "movl %%ebp, %%ecx\n\tpopl %%ebp"
                 : "=S"(out), "=D"(m0), "=c"(m1), "=b"(dest)
                 : "a"(SysCall), "b"(dest), "S"(info), "D"(m0), "c"(m1)
                 : "edx", "memory");
    *mr0 = m0;
    *mr1 = m1;
    return out;
}

static inline seL4_Word sel4_recv(seL4_CPtr src, seL4_Word *mr0, seL4_Word *mr1)
{
    seL4_Word out, b, m0, m1;
    asm volatile("pushl %%ebp\n\tmovl %%esp, %%ecx\n\tleal 1f, %%edx\n1:\n\tsysenter\n\t"
                 "movl %%ebp, %%ecx\n\tpopl %%ebp"
                 : "=b"(b), "=S"(out), "=D"(m0), "=c"(m1)
                 : "a"(SysRecv), "b"(src)
                 : "edx", "memory");
    *mr0 = m0;
    *mr1 = m1;
    return out;
}

static inline seL4_Word sel4_reply_recv(seL4_CPtr src, seL4_Word info, seL4_Word *mr0, seL4_Word *mr1)
{
    seL4_Word out, b, m0 = *mr0, m1 = *mr1;
    asm volatile("pushl %%ebp\n\tmovl %%ecx, %%ebp\n\tmovl %%esp, %%ecx\n\tleal 1f, %%edx\n1:\n\tsysenter\n\t"
                 "movl %%ebp, %%ecx\n\tpopl %%ebp"
                 : "=b"(b), "=S"(out), "=D"(m0), "=c"(m1)
                 : "a"(SysReplyRecv), "b"(src), "S"(info), "D"(m0), "c"(m1)
                 : "edx", "memory");
    *mr0 = m0;
    *mr1 = m1;
    return out;
}

/* A system call with no message registers: seL4_Send / seL4_Signal
 * (SysSend), seL4_Reply (SysReply). */
static inline void sel4_nomsg(int sys, seL4_CPtr dest, seL4_Word info)
{
    seL4_Word mr0 = 0;
    asm volatile("pushl %%ebp\n\tmovl %%esp, %%ecx\n\tleal 1f, %%edx\n1:\n\tsysenter\n\tpopl %%ebp"
                 : "+b"(dest), "+S"(info), "+D"(mr0)
                 : "a"(sys)
                 : "ecx", "edx", "memory");
}

static inline void sel4_yield(void)
{
    asm volatile("pushl %%ebp\n\tmovl %%esp, %%ecx\n\tleal 1f, %%edx\n1:\n\tsysenter\n\tpopl %%ebp"
                 :
                 : "a"(SysYield)
                 : "ebx", "ecx", "edx", "esi", "edi", "memory");
}

static inline uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}

/* An object invocation: n message words (the first two in registers),
 * k extra capabilities; the reply's label (0: no error). */
static inline seL4_Word sel4_invoke(seL4_CPtr obj, seL4_Word label, const seL4_Word *mrs, int n, const seL4_CPtr *caps, int k)
{
    seL4_Word m0 = n > 0 ? mrs[0] : 0, m1 = n > 1 ? mrs[1] : 0;
    for (int i = 2; i < n; i++)
        set_mr(i, mrs[i]);
    for (int i = 0; i < k; i++)
        set_cap(i, caps[i]);
    return msginfo_label(sel4_call(obj, msginfo(label, k, n), &m0, &m1));
}

static inline seL4_Word untyped_retype(seL4_CPtr ut, seL4_Word type, seL4_Word size_bits, seL4_Word slot, seL4_Word num)
{
    /* Into the root CNode itself (index 0, depth 0), from `slot` on. */
    seL4_Word m[6] = { type, size_bits, 0, 0, slot, num };
    seL4_CPtr c[1] = { seL4_CapInitThreadCNode };
    return sel4_invoke(ut, UntypedRetype, m, 6, c, 1);
}

static inline seL4_Word tcb_configure(seL4_CPtr tcb, seL4_Word prio, seL4_CPtr vspace, seL4_Word buffer, seL4_CPtr buffer_frame)
{
    /* fault endpoint, mcp:8 prio:8, cspace data, vspace data, buffer address */
    seL4_Word m[5] = { 0, (prio << 8) | prio, 0, 0, buffer };
    seL4_CPtr c[3] = { seL4_CapInitThreadCNode, vspace, buffer_frame };
    return sel4_invoke(tcb, TCBConfigure, m, 5, c, 3);
}

/* ia32 seL4_UserContext: eip esp eflags eax ebx ecx edx esi edi ebp tls_base fs gs */
static inline seL4_Word tcb_start(seL4_CPtr tcb, seL4_Word eip, seL4_Word esp, seL4_Word eax)
{
    seL4_Word m[2 + 13] = { 1 /* resume */, 13, eip, esp, 0, eax, 0, 0, 0, 0, 0, 0, 0, IPCBUF_GDT_SELECTOR, 0 };
    return sel4_invoke(tcb, TCBWriteRegisters, m, 15, 0, 0);
}

static inline seL4_Word tcb_suspend(seL4_CPtr tcb) { return sel4_invoke(tcb, TCBSuspend, 0, 0, 0, 0); }

static inline seL4_Word cnode_copy(seL4_Word dest, seL4_Word src)
{
    seL4_Word m[5] = { dest, 32, src, 32, seL4_AllRights };
    seL4_CPtr c[1] = { seL4_CapInitThreadCNode };
    return sel4_invoke(seL4_CapInitThreadCNode, CNodeCopy, m, 5, c, 1);
}

static inline seL4_Word cnode_revoke(seL4_Word index)
{
    seL4_Word m[2] = { index, 32 };
    return sel4_invoke(seL4_CapInitThreadCNode, CNodeRevoke, m, 2, 0, 0);
}

static inline seL4_Word asid_pool_assign(seL4_CPtr pd)
{
    seL4_CPtr c[1] = { pd };
    return sel4_invoke(seL4_CapInitThreadASIDPool, X86ASIDPoolAssign, 0, 0, c, 1);
}

static inline seL4_Word page_table_map(seL4_CPtr pt, seL4_CPtr pd, seL4_Word vaddr)
{
    seL4_Word m[2] = { vaddr, 0 };
    seL4_CPtr c[1] = { pd };
    return sel4_invoke(pt, X86PageTableMap, m, 2, c, 1);
}

static inline seL4_Word page_map(seL4_CPtr page, seL4_CPtr pd, seL4_Word vaddr)
{
    seL4_Word m[3] = { vaddr, seL4_AllRights, 0 };
    seL4_CPtr c[1] = { pd };
    return sel4_invoke(page, X86PageMap, m, 3, c, 1);
}

static inline seL4_Word page_unmap(seL4_CPtr page) { return sel4_invoke(page, X86PageUnmap, 0, 0, 0, 0); }

/* 5.0.0: MR0 = port, MR1 = byte. */
static inline seL4_Word ioport_out8(seL4_Word port, seL4_Word byte)
{
    seL4_Word m[2] = { port, byte };
    return sel4_invoke(seL4_CapIOPort, X86IOPortOut8, m, 2, 0, 0);
}

#endif
