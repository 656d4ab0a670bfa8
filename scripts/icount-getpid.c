/* An independent check of oscycles' getpid, sched_yield and pipe cells
 * under QEMU's instruction counter (scripts/validate-icount): a static
 * /init for the same kind of guest oscycles' qemu-tcg boots. There the
 * guest's TSC counts instructions (-icount shift=0), so rdtsc around N
 * calls counts the instructions of N calls plus those of the loop; an
 * empty loop of the same shape counts the loop's own. Raw syscall
 * instructions, no libc wrapper; the pipe round trip (a parent and a child
 * passing one byte through two pipes) through read and write of the same
 * raw kind. Each loop runs as BATCHES timed batches, each marked as
 * oscycles' harness marks its batches (two no-op instructions the
 * kernel-counters plugin recognises, outside the rdtsc pair), so that the
 * plugin counts its kernel and user instructions in the same invocation.
 * Prints the median batch's instructions per iteration on the first serial
 * port and ends the guest through isa-debug-exit. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

/* nopl 0x4b4f5301(%rax) and nopl 0x4b4f5302(%rax): src/measure/marks.rs. */
#define MARK_BEGIN() __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x01, 0x53, 0x4f, 0x4b" ::: "memory")
#define MARK_END() __asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x02, 0x53, 0x4f, 0x4b" ::: "memory")

static inline long sys3(long nr, long a, long b, long c) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return ret;
}

/* Timed batches per loop, as oscycles' harness times its cells: the median
 * batch is the figure. A loop's first batches may run in another regime than
 * the rest (a fresh pipe pair's first thousands of round trips: the child,
 * forked with a debit on CFS's virtual runtime, is preempted by the parent
 * it wakes until the two runtimes meet, a round trip with one sleep where
 * the steady state has two); the median is the steady state's. */
#define BATCHES 10

static int by_value(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v) {
    qsort(v, BATCHES, sizeof *v, by_value);
    return (v[BATCHES / 2 - 1] + v[BATCHES / 2]) / 2;
}

static double per_iteration(long nr, long n) {
    double batch[BATCHES];
    long m = n / BATCHES;
    for (long i = 0; i < 1000; i++) sys3(nr, 0, 0, 0); /* warm */
    for (int b = 0; b < BATCHES; b++) {
        MARK_BEGIN();
        unsigned long long t = __rdtsc();
        for (long i = 0; i < m; i++) {
            if (nr >= 0) sys3(nr, 0, 0, 0); else __asm__ volatile("" ::: "memory");
        }
        t = __rdtsc() - t;
        MARK_END();
        batch[b] = (double)t / m;
    }
    return median(batch);
}

/* One byte there and back through two pipes, n round trips. */
static double pipe_round_trip(long n) {
    int there[2], back[2];
    char w = 1;
    double batch[BATCHES];
    long m = n / BATCHES;
    if (pipe(there) || pipe(back)) return -1;
    pid_t child = fork();
    if (child == 0) {
        while (sys3(0, there[0], (long)&w, 1) == 1 && w != 0)
            if (sys3(1, back[1], (long)&w, 1) != 1) break;
        _exit(0);
    }
    for (long i = 0; i < 1000; i++) sys3(1, there[1], (long)&w, 1), sys3(0, back[0], (long)&w, 1); /* warm */
    for (int b = 0; b < BATCHES; b++) {
        MARK_BEGIN();
        unsigned long long t = __rdtsc();
        for (long i = 0; i < m; i++) {
            sys3(1, there[1], (long)&w, 1);
            sys3(0, back[0], (long)&w, 1);
        }
        t = __rdtsc() - t;
        MARK_END();
        batch[b] = (double)t / m;
    }
    w = 0;
    sys3(1, there[1], (long)&w, 1);
    waitpid(child, NULL, 0);
    return median(batch);
}

int main(int argc, char **argv) {
    long n = 100000;
    for (int i = 1; i < argc; i++) if (atol(argv[i]) > 0) n = atol(argv[i]);
    mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    int fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
    if (fd >= 0) dup2(fd, 1);
    double loop = per_iteration(-1, n);
    double getpid = per_iteration(39, n), yield = per_iteration(24, n);
    double pipe_rt = pipe_round_trip(n / 10);
    printf("icount-check calls=%ld loop=%.3f getpid=%.3f sched_yield=%.3f pipe_round_trip=%.3f\n", n, loop, getpid, yield, pipe_rt);
    fflush(stdout);
    if (ioperm(0xf4, 4, 1) == 0) outb(0x10, 0xf4);
    reboot(RB_POWER_OFF);
    return 0;
}
