/* The getppid loops of each tool, side by side (issue 63: oscycles' raw
 * getppid read 0.70 of `perf bench syscall basic` on a quiet VM). Each loop
 * is its own function; the program times them interleaved (rdtsc around n
 * calls, `reps` times each, in turn) and prints per loop the minimum and
 * median cycles per call. As /init of the guest scripts/validate-icount
 * boots (-icount shift=0: the TSC counts instructions) it prints
 * instructions per call, exact, once each, and powers the guest off.
 *
 *   gcc -O2 -static -o syscall-loops scripts/syscall-loops.c
 *   taskset -c 0 ./syscall-loops [n=2000] [reps=80]
 *
 * The loops: the syscall instruction inline (oscycles' syscall.getppid and
 * syscall.getpid); the same inside a function of its own, so that a
 * call/ret straddles the syscall; the C library's getppid() and getpid()
 * (lmbench's lat_syscall null, perf bench syscall basic and oscycles'
 * syscall.null loop over getppid()); glibc's syscall(SYS_getppid); the
 * inline syscall followed by a call to an empty function (a call/ret that
 * does not straddle it); and an empty loop. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <x86intrin.h>

static inline long sys0(long nr) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
    return ret;
}
#define LOOP __attribute__((noinline, aligned(64)))
LOOP static void empty(long n) { for (long i = 0; i < n; i++) __asm__ volatile("" ::: "memory"); }
LOOP static void raw_ppid(long n) { for (long i = 0; i < n; i++) sys0(SYS_getppid); }
LOOP static void raw_pid(long n) { for (long i = 0; i < n; i++) sys0(SYS_getpid); }
LOOP static long fn_ppid(void) { return sys0(SYS_getppid); }
LOOP static void call_ppid(long n) { for (long i = 0; i < n; i++) fn_ppid(); }
LOOP static long fn_pid(void) { return sys0(SYS_getpid); }
LOOP static void call_pid(long n) { for (long i = 0; i < n; i++) fn_pid(); }
LOOP static void libc_ppid(long n) { for (long i = 0; i < n; i++) getppid(); }
LOOP static void libc_pid(long n) { for (long i = 0; i < n; i++) getpid(); }
LOOP static void libc_syscall(long n) { for (long i = 0; i < n; i++) syscall(SYS_getppid); }
LOOP static long nothing(void) { __asm__ volatile(""); return 0; }
LOOP static void raw_then_call(long n) { for (long i = 0; i < n; i++) { sys0(SYS_getppid); nothing(); } }

static const struct { const char *name; void (*f)(long); } L[] = {
    {"empty loop", empty},
    {"raw getppid inline", raw_ppid},
    {"raw getpid inline", raw_pid},
    {"call fn{syscall getppid}", call_ppid},
    {"call fn{syscall getpid}", call_pid},
    {"libc getppid()", libc_ppid},
    {"libc getpid()", libc_pid},
    {"libc syscall(SYS_getppid)", libc_syscall},
    {"raw getppid; call empty fn", raw_then_call},
};
#define K (int)(sizeof L / sizeof L[0])

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int init = getpid() == 1;
    long n = init ? 100000 : 2000;
    int reps = init ? 1 : 80;
    /* As /init the kernel's command line gives n. */
    for (int i = 1; i < argc; i++) {
        if (atol(argv[i]) <= 0) continue;
        if (i == 2 && !init) reps = atoi(argv[i]); else n = atol(argv[i]);
    }
    if (reps > 1000) reps = 1000;
    if (init) {
        mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
        int fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
        if (fd >= 0) dup2(fd, 1);
    }
    static double per[K][1000];
    for (int k = 0; k < K; k++) L[k].f(1000); /* warm */
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < K; k++) {
            unsigned long long t = __rdtsc();
            L[k].f(n);
            per[k][r] = (double)(__rdtsc() - t) / n;
        }
    printf("syscall-loops: %s per call, %ld calls x %d rounds interleaved\n", init ? "guest instructions (icount)" : "TSC cycles", n, reps);
    for (int k = 0; k < K; k++) {
        qsort(per[k], reps, sizeof(double), by_value);
        printf("%-28s min %8.1f  median %8.1f\n", L[k].name, per[k][0], per[k][reps / 2]);
    }
    fflush(stdout);
    if (init) {
        if (ioperm(0xf4, 4, 1) == 0) outb(0x10, 0xf4);
        reboot(RB_POWER_OFF);
    }
    return 0;
}
