/* An independent check of oscycles' getpid, sched_yield and pipe cells in
 * the qemu-arm64 environment (scripts/validate-arm64): a static /init for
 * the same guest (Debian's arm64 kernel under qemu-system-aarch64 -M virt
 * -cpu cortex-a53 -icount shift=0). There the generic timer's virtual
 * count (CNTVCT_EL0, readable at EL0) runs at CNTFRQ_EL0 of the guest's
 * nanoseconds, and a guest nanosecond is one instruction: N calls between
 * two reads count the instructions of N calls and of the loop, to 10^9 /
 * CNTFRQ instructions a tick (16 at virt's 62.5 MHz). An empty loop of the
 * same shape counts the loop's own. Raw svc instructions, no libc wrapper;
 * the pipe round trip (a parent and a child passing one byte through two
 * pipes) through read and write of the same raw kind. Prints the ticks of
 * each loop on the console and powers the guest off (PSCI: QEMU exits 0). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>

enum { NR_READ = 63, NR_WRITE = 64, NR_SCHED_YIELD = 124, NR_GETPID = 172 };

static inline long sys3(long nr, long a, long b, long c) {
    register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
}

static inline unsigned long ticks(void) {
    unsigned long v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
    return v;
}

static unsigned long loop_of(long nr, long n) {
    for (long i = 0; i < 1000; i++) sys3(nr, 0, 0, 0); /* warm */
    unsigned long t = ticks();
    for (long i = 0; i < n; i++) {
        if (nr >= 0) sys3(nr, 0, 0, 0); else __asm__ volatile("" ::: "memory");
    }
    return ticks() - t;
}

/* One byte there and back through two pipes, n round trips. */
static unsigned long pipe_round_trips(long n) {
    int there[2], back[2];
    char w = 1;
    if (pipe(there) || pipe(back)) return 0;
    pid_t child = fork();
    if (child == 0) {
        while (sys3(NR_READ, there[0], (long)&w, 1) == 1 && w != 0)
            if (sys3(NR_WRITE, back[1], (long)&w, 1) != 1) break;
        _exit(0);
    }
    for (long i = 0; i < 1000; i++) sys3(NR_WRITE, there[1], (long)&w, 1), sys3(NR_READ, back[0], (long)&w, 1);
    unsigned long t = ticks();
    for (long i = 0; i < n; i++) {
        sys3(NR_WRITE, there[1], (long)&w, 1);
        sys3(NR_READ, back[0], (long)&w, 1);
    }
    t = ticks() - t;
    w = 0;
    sys3(NR_WRITE, there[1], (long)&w, 1);
    waitpid(child, NULL, 0);
    return t;
}

int main(int argc, char **argv) {
    long n = 100000;
    for (int i = 1; i < argc; i++) if (atol(argv[i]) > 0) n = atol(argv[i]);
    mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    int fd = open("/dev/console", O_WRONLY | O_NOCTTY);
    if (fd >= 0) dup2(fd, 1);
    unsigned long hz;
    __asm__ volatile("mrs %0, cntfrq_el0" : "=r"(hz));
    unsigned long loop = loop_of(-1, n), getpid = loop_of(NR_GETPID, n), yield = loop_of(NR_SCHED_YIELD, n);
    unsigned long pipe_rt = pipe_round_trips(n / 10);
    printf("\narm64-check calls=%ld hz=%lu loop=%lu getpid=%lu sched_yield=%lu pipe_round_trip=%lu\n", n, hz, loop, getpid,
           yield, pipe_rt);
    fflush(stdout);
    sync();
    reboot(RB_POWER_OFF);
    return 0;
}
