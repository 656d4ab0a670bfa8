/* An independent check of oscycles' getpid and sched_yield cells under
 * QEMU's instruction counter (scripts/validate-icount): a static /init for
 * the same kind of guest oscycles' qemu-tcg boots. There the guest's TSC
 * counts instructions (-icount shift=0), so rdtsc around N calls counts
 * the instructions of N calls plus those of the loop; an empty loop of the
 * same shape counts the loop's own. Raw syscall instructions, no libc
 * wrapper. Prints instructions per iteration on the first serial port and
 * ends the guest through isa-debug-exit. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/io.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <unistd.h>
#include <x86intrin.h>

static inline long sys0(long nr) {
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr) : "rcx", "r11", "memory");
    return ret;
}

static double per_iteration(long nr, long n) {
    for (long i = 0; i < 1000; i++) sys0(nr); /* warm */
    unsigned long long t = __rdtsc();
    for (long i = 0; i < n; i++) {
        if (nr >= 0) sys0(nr); else __asm__ volatile("" ::: "memory");
    }
    return (double)(__rdtsc() - t) / n;
}

int main(int argc, char **argv) {
    long n = 100000;
    for (int i = 1; i < argc; i++) if (atol(argv[i]) > 0) n = atol(argv[i]);
    mount("devtmpfs", "/dev", "devtmpfs", 0, NULL);
    int fd = open("/dev/ttyS0", O_WRONLY | O_NOCTTY);
    if (fd >= 0) dup2(fd, 1);
    double loop = per_iteration(-1, n);
    printf("icount-check calls=%ld loop=%.3f getpid=%.3f sched_yield=%.3f\n", n, loop, per_iteration(39, n), per_iteration(24, n));
    fflush(stdout);
    if (ioperm(0xf4, 4, 1) == 0) outb(0x10, 0xf4);
    reboot(RB_POWER_OFF);
    return 0;
}
