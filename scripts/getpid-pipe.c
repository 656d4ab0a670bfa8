/* An independent check of oscycles' getpid and same-core pipe round trip:
 * a static program timing them with rdtsc, run natively, as /init of a
 * User-Mode Linux kernel and under `runsc do` (scripts/validate-uml-gvisor).
 * getpid: N calls of syscall(SYS_getpid) in 101 loops of N/100, the median
 * loop; pipe: a parent and a child on one CPU pass a 1-byte token through
 * two pipes, N/10 round trips in 101 loops, the median loop. Short loops
 * and their median, as oscycles' batches: on a shared machine a loop of
 * seconds always holds the time other processes ran. Before measuring,
 * two seconds of getpid calls: a kernel that has just booted is still busy
 * (as /init of UML, getpid read 35-37k cycles at once, 27-28k three seconds
 * later), and oscycles measures only after its calibration. Prints cycles
 * per operation. Its CPU 0 is the guest's (UML has one; gVisor's Sentry
 * keeps the mask to itself): where its host processes and the intercepting
 * one run is set from the host by the script, as oscycles sets it
 * (--helper-placement same|cross). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/reboot.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#define REPS 101

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v) {
    qsort(v, REPS, sizeof *v, cmp);
    return v[REPS / 2];
}

static double getpid_cycles(long n) {
    double v[REPS];
    for (int r = 0; r < REPS; r++) {
        unsigned long long t = __rdtsc();
        for (long i = 0; i < n; i++) syscall(SYS_getpid);
        v[r] = (double)(__rdtsc() - t) / n;
    }
    return median(v);
}

static double pipe_cycles(long n) {
    int there[2], back[2];
    if (pipe(there) || pipe(back)) return -1;
    pid_t child = fork();
    if (child == 0) {
        char w;
        while (read(there[0], &w, sizeof w) == sizeof w && w != 0)
            if (write(back[1], &w, sizeof w) != sizeof w) break;
        _exit(0);
    }
    double v[REPS];
    for (int r = 0; r < REPS; r++) {
        unsigned long long t = __rdtsc();
        char w = 1;
        for (long i = 0; i < n; i++) {
            if (write(there[1], &w, sizeof w) != sizeof w || read(back[0], &w, sizeof w) != sizeof w) return -1;
        }
        v[r] = (double)(__rdtsc() - t) / n;
    }
    char stop = 0;
    if (write(there[1], &stop, sizeof stop) != sizeof stop) return -1;
    waitpid(child, NULL, 0);
    return median(v);
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void settle(double seconds) {
    for (double end = now_s() + seconds; now_s() < end;)
        for (int i = 0; i < 1000; i++) syscall(SYS_getpid);
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(0, &one);
    sched_setaffinity(0, sizeof one, &one); /* the child inherits it: same core */
    settle(2.0);
    printf("getpid %.0f\n", getpid_cycles(n / 100));
    printf("pipe_round_trip %.0f\n", pipe_cycles(n / 1000));
    fflush(stdout);
    if (getpid() == 1) reboot(RB_POWER_OFF); /* /init of a UML kernel */
    return 0;
}
