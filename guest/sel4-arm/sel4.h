/*
 * sel4.h: the part of seL4 5.0.0's aarch32 user ABI that oscycles' ARM root
 * task uses, written for it (no libsel4 build): the swi system calls with
 * four message registers in machine registers, the IPC buffer, the boot
 * info and the few object invocations.
 *
 * The numbers are seL4 5.0.0's for the configuration scripts/setup-sel4-arm
 * builds (guest/sel4-arm/autoconf-*.h: one node, no hypervisor, no SMMU, no
 * hardware debug API): the invocation labels as the kernel build's
 * generated api/invocation.h and arch/api/invocation.h number them, the
 * object types of libsel4's object_types.h and its aarch32 additions, the
 * boot info of bootinfo_types.h (as the ia32 guest/sel4/sel4.h).
 *
 * System calls (kernel src/arch/arm/32/traps.S, libsel4 aarch32
 * syscalls.h): `swi #0` with r7 = the call, r0 = capability / badge,
 * r1 = message info, r2..r5 = MR0..MR3, in and out. MR4 and up are in the
 * IPC buffer.
 */
#ifndef OSCYCLES_SEL4_ARM_H
#define OSCYCLES_SEL4_ARM_H

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
    seL4_CapInitThreadASIDPool = 6,
};

enum {
    seL4_UntypedObject = 0, seL4_TCBObject = 1, seL4_EndpointObject = 2, seL4_NotificationObject = 3,
    seL4_CapTableObject = 4, seL4_ARM_SmallPageObject = 5, seL4_ARM_PageTableObject = 9,
    seL4_ARM_PageDirectoryObject = 10,
};

/* Invocation labels (api, then arch). */
enum {
    UntypedRetype = 1, TCBWriteRegisters = 3, TCBConfigure = 5, TCBSuspend = 10, TCBResume = 11,
    CNodeCopy = 17, ARMPageTableMap = 32, ARMPageMap = 34, ARMASIDPoolAssign = 43,
};

#define seL4_AllRights 7u
#define seL4_ReadWrite 3u
#define seL4_MsgMaxLength 120u
/* The message registers carried in machine registers (r2..r5). */
#define REGISTER_MRS 4
/* VM attributes: cacheable (the default) or not (device pages). */
#define ARM_CACHEABLE 3u
#define ARM_UNCACHED 0u

typedef struct { seL4_Word start, end; } seL4_SlotRegion;
typedef struct __attribute__((packed)) {
    seL4_Word paddr;
    uint8_t padding1, padding2, sizeBits, isDevice;
} seL4_UntypedDesc;
typedef struct __attribute__((packed)) {
    seL4_Word extraLen, nodeID, numNodes, numIOPTLevels;
    seL4_Word *ipcBuffer;
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

/* The running thread's IPC buffer (seL4_IPCBuffer: tag, msg[120],
 * userData, caps_or_badges[3], ...): the kernel keeps its address in
 * TPIDRURW for each thread (CONFIG_IPC_BUF_TPIDRURW). */
static inline volatile seL4_Word *ipc_buffer(void)
{
    volatile seL4_Word *p;
    asm volatile("mrc p15, 0, %0, c13, c0, 2" : "=r"(p));
    return p;
}
static inline void set_mr(int i, seL4_Word v) { ipc_buffer()[1 + i] = v; }
static inline seL4_Word get_mr(int i) { return ipc_buffer()[1 + i]; }
static inline void set_cap(int i, seL4_CPtr c) { ipc_buffer()[1 + 120 + 1 + i] = c; }

/* A call with r0..r5 in and out (Call, ReplyRecv, Recv): mr[0..3] in the
 * registers; the reply's message info; *badge the sender's badge. */
static inline seL4_Word sel4_swi(seL4_Word sys, seL4_CPtr cap, seL4_Word info, seL4_Word mr[REGISTER_MRS], seL4_Word *badge)
{
    register seL4_Word r0 asm("r0") = cap;
    register seL4_Word r1 asm("r1") = info;
    register seL4_Word r2 asm("r2") = mr[0];
    register seL4_Word r3 asm("r3") = mr[1];
    register seL4_Word r4 asm("r4") = mr[2];
    register seL4_Word r5 asm("r5") = mr[3];
    register seL4_Word r7 asm("r7") = sys;
    asm volatile("swi #0" : "+r"(r0), "+r"(r1), "+r"(r2), "+r"(r3), "+r"(r4), "+r"(r5) : "r"(r7) : "memory");
    mr[0] = r2;
    mr[1] = r3;
    mr[2] = r4;
    mr[3] = r5;
    if (badge)
        *badge = r0;
    return r1;
}
#define sel4_call(dest, info, mr) sel4_swi(SysCall, dest, info, mr, 0)
#define sel4_reply_recv(src, info, mr) sel4_swi(SysReplyRecv, src, info, mr, 0)
#define sel4_recv(src, mr) sel4_swi(SysRecv, src, 0, mr, 0)

/* A system call with no message registers: seL4_Reply (SysReply). */
static inline void sel4_nomsg(int sys, seL4_CPtr dest, seL4_Word info)
{
    register seL4_Word r0 asm("r0") = dest;
    register seL4_Word r1 asm("r1") = info;
    register seL4_Word r7 asm("r7") = (seL4_Word)sys;
    asm volatile("swi #0" : "+r"(r0), "+r"(r1) : "r"(r7) : "r2", "r3", "r4", "r5", "memory");
}

static inline void sel4_yield(void)
{
    register seL4_Word r7 asm("r7") = (seL4_Word)SysYield;
    asm volatile("swi #0" : : "r"(r7) : "r0", "r1", "r2", "r3", "r4", "r5", "memory");
}

/* An object invocation: n message words (the first four in registers),
 * k extra capabilities; the reply's label (0: no error). */
static inline seL4_Word sel4_invoke(seL4_CPtr obj, seL4_Word label, const seL4_Word *mrs, int n, const seL4_CPtr *caps, int k)
{
    seL4_Word mr[REGISTER_MRS] = { 0, 0, 0, 0 };
    for (int i = 0; i < n; i++) {
        if (i < REGISTER_MRS)
            mr[i] = mrs[i];
        else
            set_mr(i, mrs[i]);
    }
    for (int i = 0; i < k; i++)
        set_cap(i, caps[i]);
    return msginfo_label(sel4_call(obj, msginfo(label, (seL4_Word)k, (seL4_Word)n), mr));
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

/* aarch32 seL4_UserContext: pc sp cpsr r0 r1 r8 r9 r10 r11 r12 r2 r3 r4
 * r5 r6 r7 r14; resumed at once, in user mode (cpsr 0x10), ARM state. */
static inline seL4_Word tcb_start(seL4_CPtr tcb, seL4_Word pc, seL4_Word sp, seL4_Word r0, seL4_Word r1)
{
    seL4_Word m[2 + 17] = { 1 /* resume */, 17, pc, sp, 0x10, r0, r1 };
    return sel4_invoke(tcb, TCBWriteRegisters, m, 2 + 17, 0, 0);
}

static inline seL4_Word tcb_suspend(seL4_CPtr tcb) { return sel4_invoke(tcb, TCBSuspend, 0, 0, 0, 0); }

static inline seL4_Word cnode_copy(seL4_Word dest, seL4_Word src)
{
    seL4_Word m[5] = { dest, 32, src, 32, seL4_AllRights };
    seL4_CPtr c[1] = { seL4_CapInitThreadCNode };
    return sel4_invoke(seL4_CapInitThreadCNode, CNodeCopy, m, 5, c, 1);
}

static inline seL4_Word asid_pool_assign(seL4_CPtr pd)
{
    seL4_CPtr c[1] = { pd };
    return sel4_invoke(seL4_CapInitThreadASIDPool, ARMASIDPoolAssign, 0, 0, c, 1);
}

static inline seL4_Word page_table_map(seL4_CPtr pt, seL4_CPtr pd, seL4_Word vaddr)
{
    seL4_Word m[2] = { vaddr, ARM_CACHEABLE };
    seL4_CPtr c[1] = { pd };
    return sel4_invoke(pt, ARMPageTableMap, m, 2, c, 1);
}

static inline seL4_Word page_map(seL4_CPtr page, seL4_CPtr pd, seL4_Word vaddr, seL4_Word attributes)
{
    seL4_Word m[3] = { vaddr, seL4_ReadWrite, attributes };
    seL4_CPtr c[1] = { pd };
    return sel4_invoke(page, ARMPageMap, m, 3, c, 1);
}

#endif
