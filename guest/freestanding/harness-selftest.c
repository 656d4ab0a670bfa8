/*
 * Host-side self-test of harness.c (src/run/env/program/words.rs's tests
 * compile and run it with the words the host makes for a plan, then decode
 * its answer): the harness's settings as facts, and for each benchmark id
 * of benches= a case (not measured) for each row of its case list with the
 * params as the library echoes them, or one case when it has no list; an
 * IPC benchmark's rows through ipc_case_begin. Then a measure() of a batch
 * function whose time is its inner count.
 */
#include <unistd.h>
#include "harness.h"

static void put(char c, void *ctx)
{
    (void)ctx;
    (void)!write(1, &c, 1);
}

static uint64_t counted(void *ctx, uint32_t n)
{
    (void)ctx;
    uint64_t t0 = BATCH_BEGIN((uint64_t)0);
    return BATCH_END((uint64_t)n, t0);
}

int main(int argc, char **argv)
{
    static char mem[1 << 16];
    struct frame_out o = { put, 0 };
    struct span mode = { "run", 3 }, ids, row, space;
    struct rows it;
    uint64_t words;
    if (argc < 2)
        return 2;
    harness_words(argv[1]);
    word_arg("mode", &mode);
    doc_begin(mem, sizeof mem, "harness-selftest", 0);
    fb_kv_u64(&doc, 0, "target_batch", harness.target_batch);
    fb_kv_u64(&doc, 0, "batches", harness.batches);
    fb_kv_u64(&doc, 0, "fixed_inner", harness.fixed_inner);
    fb_kv_u64(&doc, 0, "mode_is_hang", span_is(mode, "hang"));
    doc_cases();
    word_arg("benches", &ids);
    for (int i = 0; i < ids.n;) {
        char id[96];
        int n = 0;
        while (i < ids.n && ids.p[i] != ',' && n < 95)
            id[n++] = ids.p[i++];
        id[n] = 0;
        i++;
        if (!planned(id) || !rows_of(id, &it)) {
            case_begin(id);
            case_not("n/a", planned(id) ? "no case list" : "not planned");
            continue;
        }
        while (next_row(&it, &row)) {
            if (id[0] == 'i' && id[1] == 'p' && id[2] == 'c') {
                if (ipc_case_begin(id, &it, row, "cross-core", &space, &words))
                    case_not("n/a", span_is(space, "intra") ? "intra" : "inter");
                continue;
            }
            case_begin(id);
            case_params(&it, row);
            case_not("n/a", "a row");
        }
    }
    case_begin("measured");
    case_ok(measure(counted, 0));
    doc_end();
    frame_send(&o, "samples", 1, doc.p, doc.len);
    return doc.overflow;
}
