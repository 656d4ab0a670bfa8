/*
 * harness.h: what every freestanding C guest program (guest/sel4, guest/mach,
 * guest/sel4-arm) does the same way, beside frame.h's framing; harness.c is
 * the code, compiled in with each program (no libc, 32-bit arithmetic only).
 * A guest keeps only its kernel's own: the calls it measures, its boot, its
 * clock and its way out.
 *
 * - The host's words (src/run/env/program/words.rs): `key=value` words,
 *   `mode=`, `benches=` (the planned benchmark ids, comma-separated), the
 *   harness's `batch_cycles=`, `batches=`, `inner=`, and the planned cases
 *   of each benchmark with parameters, `cases.<benchmark>=<k1>/<k2>:<v1>/<v2>:...`
 *   (the names, then one row of values a case).
 * - The harness: one inner-count rule (doubled from 1 until a batch takes
 *   `batch_cycles`, or the fixed `inner=`; at most 2^24), one untimed batch
 *   first, then `batches=` timed ones (measure()). A guest's batch function
 *   brackets its operations with BATCH_BEGIN / BATCH_END. With `mark=1`
 *   (the host counts the kernel: --kernel-counters) each timed batch is
 *   marked for the QEMU plugin (marks.h) and its case says which windows
 *   its batches are.
 * - The answer: the samples document of frame.h's writers, one case at a
 *   time (case_begin, case_params, the case's own details through
 *   fb_kv_*(&doc, 0, ...), then case_ok or case_not), and frame.h's error
 *   document when it outgrew its buffer (doc_end).
 */
#ifndef OSCYCLES_HARNESS_H
#define OSCYCLES_HARNESS_H

#include <stddef.h>
#include <stdint.h>
#include "frame.h"
#include "marks.h"

/* ---- the host's words ---------------------------------------------------- */

/* A piece of the words: its start and length (not NUL-ended). */
struct span {
    const char *p;
    int n;
};

/* Takes the host's words (NUL-ended, kept, not copied) and reads the
 * harness's own from them (batch_cycles=, batches=, inner=). */
void harness_words(const char *words);
/* The value of `key=` among the words; 0 when there is none. */
int word_arg(const char *key, struct span *value);
/* Whether `s` is `text`, to the letter. */
int span_is(struct span s, const char *text);
/* The decimal number `s` starts with (0 when none). */
uint64_t span_number(struct span s);
/* Whether benchmark `id` is in benches=. */
int planned(const char *id);

/* The planned cases of one benchmark (cases.<benchmark>=): the parameter
 * names, and the rows not read yet. */
struct rows {
    struct span names, rest;
};
/* The case list of `benchmark`; 0 when the words have none. */
int rows_of(const char *benchmark, struct rows *it);
/* The next row of values; 0 after the last. */
int next_row(struct rows *it, struct span *row);
/* The value of parameter `key` in `row`; 0 when the names have no `key`. */
int row_param(const struct rows *it, struct span row, const char *key, struct span *value);

/* ---- the harness --------------------------------------------------------- */

#define HARNESS_MAX_BATCHES 64

struct harness {
    uint64_t target_batch;   /* batch_cycles=, in the guest clock's units once the guest has turned it so */
    uint32_t batches;        /* timed batches a case (batches=, at most HARNESS_MAX_BATCHES) */
    uint32_t fixed_inner;    /* inner=: the inner count, not doubled (0: doubled) */
    uint64_t batch[HARNESS_MAX_BATCHES]; /* the last measure()'s timed batches */
    /* What case_ok turns each batch into (a clock's counts into guest
     * instructions, say); 0: sent as measured. */
    uint64_t (*units)(uint64_t counts);
    uint32_t mark;           /* mark=1: the timed batches are marked (marks.h) */
    /* The last measure()'s windows: the first (windows are numbered from 0
     * by the end marks made, in order) and how many its timed batches made. */
    uint32_t first_window, windows;
};
extern struct harness harness;

/* 1 while measure() runs its timed batches with mark=1; the end marks made. */
extern volatile int harness_marking;
extern uint32_t harness_windows;

/* Operations n, timed: a guest's batch function returns the time its n
 * operations took, between BATCH_BEGIN and BATCH_END. */
typedef uint64_t (*batch_fn)(void *ctx, uint32_t n);

/* 1 while measure() runs its timed batches, 0 in its untimed ones. */
extern volatile int harness_timed;

/* Finds the inner count (the one rule above), then times harness.batches
 * batches into harness.batch; the inner count. Here, not in harness.c: in
 * the guest's own unit the compiler calls its batch functions directly
 * (their code, and so what a batch counts, is what it was before the
 * library). */
static inline uint32_t measure(batch_fn f, void *ctx)
{
    uint32_t n = harness.fixed_inner ? harness.fixed_inner : 1;
    f(ctx, n);
    while (!harness.fixed_inner && n < (1u << 24) && f(ctx, n) < harness.target_batch)
        n *= 2;
    harness_timed = 1;
    harness.first_window = harness_windows;
    harness_marking = (int)harness.mark;
    for (uint32_t b = 0; b < harness.batches; b++)
        harness.batch[b] = f(ctx, n);
    harness_marking = 0;
    harness.windows = harness_windows - harness.first_window;
    harness_timed = 0;
    return n;
}

/*
 * The one place around every timed batch. A batch function reads
 *
 *     uint64_t t0 = BATCH_BEGIN(rdtsc());
 *     for (uint32_t i = 0; i < n; i++) ...;
 *     return BATCH_END(rdtsc(), t0);
 *
 * with its own clock read (of any unsigned type: t0 takes it; the
 * difference is taken in the clock read's type, so a 32-bit counter wraps
 * modulo 2^32). HARNESS_MARK_BEGIN / HARNESS_MARK_END stand right outside
 * the two clock reads: the kernel counters' marks (marks.h: on x86 a
 * `nopl 0x4b4f5301(%eax)` / `0x4b4f5302`; an architecture is one more
 * #elif there) while harness_marking, each end mark numbering a window.
 * Not marking, each is a load and a branch, outside the clock reads: a
 * batch counts the same instructions marked or not.
 */
#define HARNESS_MARK_BEGIN()                                                                                           \
    ({                                                                                                                 \
        if (harness_marking)                                                                                           \
            MARK_BEGIN();                                                                                              \
    })
#define HARNESS_MARK_END()                                                                                             \
    ({                                                                                                                 \
        if (harness_marking) {                                                                                         \
            MARK_END();                                                                                                \
            harness_windows++;                                                                                         \
        }                                                                                                              \
    })
#define BATCH_BEGIN(read) ((void)HARNESS_MARK_BEGIN(), (read))
#define BATCH_END(read, t0)                                                                                            \
    ({                                                                                                                 \
        __typeof__(read) t1_ = (read);                                                                                 \
        HARNESS_MARK_END();                                                                                            \
        (uint64_t)(__typeof__(read))(t1_ - (__typeof__(read))(t0));                                                    \
    })

/* ---- the answer ---------------------------------------------------------- */

/* The samples document. */
extern struct frame_buf doc;

/* Starts the document in `mem`: `{"program":PROGRAM` and, unless 0,
 * `"kernel":KERNEL`; the guest adds its facts with fb_kv_*(&doc, 0, ...). */
void doc_begin(char *mem, size_t cap, const char *program, const char *kernel);
/* Opens the list of cases (after the facts). */
void doc_cases(void);
/* Closes the document; one that outgrew its buffer becomes frame.h's error
 * document (every planned case failed with the reason). */
void doc_end(void);

/* Opens a case of `benchmark`. */
void case_begin(const char *benchmark);
/* The case's params: each name of the case list with `row`'s value (a
 * number when all digits, else a string), as the host planned them. */
void case_params(const struct rows *it, struct span row);
/* Opens the case of a row of an IPC benchmark (parameters space, cores and
 * words, as src/families/bench/schema/ipc.rs plans them) and reads it: 1
 * with its space and words; 0 when the case is answered already (failed
 * when a parameter is missing, n/a with `cross_core` when the two sides
 * are to be on two cores). */
int ipc_case_begin(const char *benchmark, const struct rows *it, struct span row, const char *cross_core,
                   struct span *space, uint64_t *words);
/* Ends a measured case: the inner count and harness.batch; with mark=1
 * also the last measure()'s windows (`"windows":[first,count]`). */
void case_ok(uint32_t inner);
/* Ends a case not measured: `status` "n/a" or "failed", and why. */
void case_not(const char *status, const char *reason);

/* The line a guest prints when it cannot go on: "\n<program>: FAILED
 * <what> error <err>\n". */
void say_failed(const struct frame_out *o, const char *program, const char *what, uint64_t err);

#endif
