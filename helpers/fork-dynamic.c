/* lat_proc fork's process (oscycles, proc.fork-dynamic).
 *
 * lmbench times fork in its own small, dynamically linked C program whose
 * child leaves through exit() (the C library's exit path); oscycles is a
 * static binary, so it forks a program of that kind instead: this one.
 * build.rs compiles it with the system's cc (dynamically linked, as cc
 * links by default) and oscycles embeds it.
 *
 * Protocol, on stdin and stdout (pipes to oscycles): oscycles writes a
 * request, a native-endian uint64 n; this program forks n children one
 * after another, each child calls exit(1), and it waits for each; then it
 * answers one byte: 0 when every child exited with status 1, 1 otherwise.
 * End of input ends it.
 *
 * The forks come from a worker, a child this program makes at the first
 * request and waits for, as lmbench's benchmp() forks from a worker child of lat_proc:
 * the forking process's memory is then shared copy-on-write with a waiting
 * parent, which makes each fork dearer (its anonymous memory hangs from two
 * processes' mappings, one level deeper). */
#include <stdint.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int forks(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        pid_t pid = fork();
        if (pid == 0)
            exit(1);
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 1)
            return 1;
    }
    return 0;
}

int main(void) {
    uint64_t n;
    if (read(0, &n, sizeof n) != (ssize_t)sizeof n)
        return 0;
    /* The worker is made at the first request, after oscycles has pinned
     * this process: it inherits the CPUs. */
    pid_t worker = fork();
    if (worker < 0)
        return 2;
    if (worker > 0) {
        int status;
        if (waitpid(worker, &status, 0) != worker || !WIFEXITED(status))
            return 2;
        return WEXITSTATUS(status);
    }
    do {
        char answer = (char)forks(n);
        if (write(1, &answer, 1) != 1)
            return 2;
    } while (read(0, &n, sizeof n) == (ssize_t)sizeof n);
    return 0;
}
