/* The process oscycles' process-creation rows fork from (proc.*).
 *
 * A fork copies the forking process (its page tables, mappings, open
 * files), so its cost depends on that process's size. oscycles does not
 * fork itself, whose size depends on whichever cases ran before in it: it
 * starts this small program, fresh for each case, and asks it to create
 * processes. build.rs compiles it twice: dynamically linked (cc's default),
 * the small dynamically linked C process lmbench's lat_proc runs in, and
 * statically linked (-static), for the rows that fork a static process and
 * for systems without a C library (a guest's initramfs). oscycles embeds
 * both.
 *
 * Usage: forker OP STATUS [PATH] [--worker] [--touch-mib N [--thp]]
 *   OP      what one operation is:
 *           fork      fork; the child leaves through exit() (the C library's exit, as lmbench's)
 *           fork-raw  fork; the child leaves through _exit()
 *           exec      fork; the child closes stdout and execve's PATH (as lmbench's)
 *           spawn     posix_spawn of PATH
 *           vfork     vfork; the child execve's PATH
 *           each followed by waitpid.
 *   STATUS  the exit status every child must end with (fork children exit with it).
 *   --worker      the operations run in a worker, a child made at the first
 *                 request that this process waits for, as lmbench's benchmp()
 *                 forks from a worker child of lat_proc: the forking
 *                 process's memory is then shared copy-on-write with a
 *                 waiting parent.
 *   --touch-mib N before the first request, map N MiB of anonymous memory
 *                 and write every 4 KiB page of it: a process of that size
 *                 forks (fork cost against process size).
 *   --thp         ask for transparent huge pages for it (madvise); without
 *                 it the region is marked MADV_NOHUGEPAGE (4 KiB pages).
 *
 * Protocol, on stdin and stdout (pipes to oscycles): oscycles writes a
 * request, a native-endian uint64 n; the forking process performs n
 * operations one after another and answers one byte: 0 when every child
 * ended with STATUS, 1 otherwise. The request UINT64_MAX asks who forks:
 * the answer is the forking process's pid (native-endian int32), whose
 * size oscycles reads from /proc. End of input ends it. */
#define _GNU_SOURCE
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

enum op { FORK, FORK_RAW, EXEC, SPAWN, VFORK };

static enum op op;
static int want;
static char *path;
static char *child_argv[2];
static char *child_envp[1];

static pid_t create(void) {
    pid_t pid;
    switch (op) {
    case SPAWN:
        return posix_spawn(&pid, path, NULL, NULL, child_argv, child_envp) == 0 ? pid : -1;
    case VFORK:
        pid = vfork();
        if (pid == 0) {
            execve(path, child_argv, child_envp);
            _exit(127);
        }
        return pid;
    default:
        pid = fork();
        if (pid != 0)
            return pid;
        if (op == FORK)
            exit(want);
        if (op == FORK_RAW)
            _exit(want);
        close(1);
        execve(path, child_argv, child_envp);
        _exit(127);
    }
}

static int operations(uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        pid_t pid = create();
        int status;
        if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != want)
            return 1;
    }
    return 0;
}

static int touch(uint64_t mib, int thp) {
    size_t bytes = (size_t)mib << 20;
    char *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -1;
    madvise(p, bytes, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    for (size_t o = 0; o < bytes; o += 4096)
        p[o] = 1;
    return 0;
}

/* Answers requests until end of input. */
static int serve(uint64_t n) {
    do {
        if (n == UINT64_MAX) {
            int32_t pid = (int32_t)getpid();
            if (write(1, &pid, sizeof pid) != (ssize_t)sizeof pid)
                return 2;
            continue;
        }
        char answer = (char)operations(n);
        if (write(1, &answer, 1) != 1)
            return 2;
    } while (read(0, &n, sizeof n) == (ssize_t)sizeof n);
    return 0;
}

static int parse(int argc, char **argv, int *worker, uint64_t *mib, int *thp) {
    static const char *names[] = {"fork", "fork-raw", "exec", "spawn", "vfork"};
    if (argc < 3)
        return -1;
    op = (enum op)-1;
    for (int i = 0; i < 5; i++)
        if (strcmp(argv[1], names[i]) == 0)
            op = (enum op)i;
    if ((int)op < 0)
        return -1;
    want = atoi(argv[2]);
    int i = 3;
    if (op >= EXEC) {
        if (argc < 4)
            return -1;
        path = argv[i++];
    }
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--worker") == 0)
            *worker = 1;
        else if (strcmp(argv[i], "--thp") == 0)
            *thp = 1;
        else if (strcmp(argv[i], "--touch-mib") == 0 && i + 1 < argc)
            *mib = strtoull(argv[++i], NULL, 10);
        else
            return -1;
    }
    child_argv[0] = path;
    return 0;
}

int main(int argc, char **argv) {
    int worker = 0, thp = 0;
    uint64_t mib = 0, n;
    if (parse(argc, argv, &worker, &mib, &thp) != 0)
        return 3;
    if (mib > 0 && touch(mib, thp) != 0)
        return 4;
    if (read(0, &n, sizeof n) != (ssize_t)sizeof n)
        return 0;
    if (!worker)
        return serve(n);
    /* The worker is made at the first request, after oscycles has pinned
     * this process: it inherits the CPUs. */
    pid_t pid = fork();
    if (pid < 0)
        return 2;
    if (pid == 0)
        return serve(n);
    int status;
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
        return 2;
    return WEXITSTATUS(status);
}
