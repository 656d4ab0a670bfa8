/*
 * harness.c: the host's words, the harness loop and the samples document
 * of every freestanding C guest program (harness.h says what each is).
 */
#include "harness.h"

struct harness harness = { 10000000, 11, 0, { 0 }, 0, 0, 0, 0 };
volatile int harness_timed;
volatile int harness_marking;
uint32_t harness_windows;
struct frame_buf doc;

static const char *words = "";
static int cases_begun;

/* ---- the host's words ---------------------------------------------------- */

int span_is(struct span s, const char *text)
{
    for (int i = 0; i < s.n; i++)
        if (s.p[i] != text[i] || !text[i])
            return 0;
    return text[s.n] == 0;
}

uint64_t span_number(struct span s)
{
    uint64_t v = 0;
    for (int i = 0; i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; i++)
        v = v * 10 + (uint64_t)(s.p[i] - '0');
    return v;
}

int word_arg(const char *key, struct span *value)
{
    const char *p = words;
    while (*p) {
        while (*p == ' ')
            p++;
        const char *w = p;
        while (*p && *p != ' ')
            p++;
        const char *eq = w;
        while (eq < p && *eq != '=')
            eq++;
        if (eq < p && span_is((struct span){ w, (int)(eq - w) }, key)) {
            *value = (struct span){ eq + 1, (int)(p - eq - 1) };
            return 1;
        }
    }
    return 0;
}

/* The piece of `*rest` before the first `sep` (all of it when none), and
 * `*rest` past it. */
static struct span cut(struct span *rest, char sep)
{
    int i = 0;
    while (i < rest->n && rest->p[i] != sep)
        i++;
    struct span head = { rest->p, i };
    int skip = i < rest->n ? i + 1 : i;
    *rest = (struct span){ rest->p + skip, rest->n - skip };
    return head;
}

int planned(const char *id)
{
    struct span list;
    if (!word_arg("benches", &list))
        return 0;
    while (list.n > 0)
        if (span_is(cut(&list, ','), id))
            return 1;
    return 0;
}

void harness_words(const char *w)
{
    struct span v;
    words = w;
    if (word_arg("batch_cycles", &v) && span_number(v))
        harness.target_batch = span_number(v);
    if (word_arg("batches", &v) && span_number(v))
        harness.batches = span_number(v) < HARNESS_MAX_BATCHES ? (uint32_t)span_number(v) : HARNESS_MAX_BATCHES;
    if (word_arg("inner", &v))
        harness.fixed_inner = (uint32_t)span_number(v);
    /* Only where the marks are the plugin's (marks.h): else no windows. */
    if (word_arg("mark", &v))
        harness.mark = MARKS_COUNTED && span_number(v) == 1;
}

int rows_of(const char *benchmark, struct rows *it)
{
    static const char prefix[] = "cases.";
    char key[96];
    size_t k = 0;
    for (; prefix[k]; k++)
        key[k] = prefix[k];
    for (const char *b = benchmark; *b && k < sizeof key - 1; b++)
        key[k++] = *b;
    key[k] = 0;
    struct span list;
    if (!word_arg(key, &list))
        return 0;
    it->names = cut(&list, ':');
    it->rest = list;
    return 1;
}

int next_row(struct rows *it, struct span *row)
{
    if (it->rest.n <= 0)
        return 0;
    *row = cut(&it->rest, ':');
    return 1;
}

/* The i-th field of a `/`-separated row (empty past the last). */
static struct span field(struct span row, int i)
{
    const char *p = row.p, *end = row.p + row.n;
    for (; i > 0 && p < end; p++)
        if (*p == '/')
            i--;
    const char *q = p;
    while (q < end && *q != '/')
        q++;
    return (struct span){ p, (int)(q - p) };
}

int row_param(const struct rows *it, struct span row, const char *key, struct span *value)
{
    for (int i = 0;; i++) {
        struct span k = field(it->names, i);
        if (k.n == 0)
            return 0;
        if (span_is(k, key)) {
            *value = field(row, i);
            return 1;
        }
    }
}

/* ---- the answer ---------------------------------------------------------- */

static char doc_program[64];

void doc_begin(char *mem, size_t cap, const char *program, const char *kernel)
{
    size_t i = 0;
    for (; program[i] && i < sizeof doc_program - 1; i++)
        doc_program[i] = program[i];
    doc_program[i] = 0;
    fb_init(&doc, mem, cap);
    fb_char(&doc, '{');
    fb_kv_str(&doc, 1, "program", program);
    if (kernel)
        fb_kv_str(&doc, 0, "kernel", kernel);
}

void doc_cases(void)
{
    fb_raw(&doc, ",\"cases\":[");
}

void doc_end(void)
{
    fb_raw(&doc, "]}");
    if (doc.overflow)
        fb_error_doc(&doc, doc.p, doc.cap, doc_program, "the samples outgrew their buffer");
}

void case_begin(const char *benchmark)
{
    fb_case_begin(&doc, cases_begun == 0, benchmark);
    cases_begun++;
}

void case_params(const struct rows *it, struct span row)
{
    char name[32], value[32];
    fb_params_begin(&doc);
    for (int i = 0;; i++) {
        struct span k = field(it->names, i), v = field(row, i);
        if (k.n == 0 || k.n >= 32 || v.n >= 32)
            break;
        for (int j = 0; j < k.n; j++)
            name[j] = k.p[j];
        name[k.n] = 0;
        int digits = v.n > 0;
        for (int j = 0; j < v.n; j++) {
            value[j] = v.p[j];
            digits &= v.p[j] >= '0' && v.p[j] <= '9';
        }
        value[v.n] = 0;
        if (digits)
            fb_kv_u64(&doc, i == 0, name, span_number(v));
        else
            fb_kv_str(&doc, i == 0, name, value);
    }
    fb_obj_end(&doc);
}

int ipc_case_begin(const char *benchmark, const struct rows *it, struct span row, const char *cross_core,
                   struct span *space, uint64_t *words)
{
    struct span cores, w;
    int named = row_param(it, row, "space", space) & row_param(it, row, "cores", &cores) & row_param(it, row, "words", &w);
    case_begin(benchmark);
    case_params(it, row);
    if (!named)
        case_not("failed", "the case names no space, cores or words");
    else if (!span_is(cores, "same"))
        case_not("n/a", cross_core);
    *words = span_number(w);
    return named && span_is(cores, "same");
}

void case_ok(uint32_t inner)
{
    if (harness.units)
        for (uint32_t b = 0; b < harness.batches; b++)
            harness.batch[b] = harness.units(harness.batch[b]);
    if (harness.mark) {
        uint64_t w[2] = { harness.first_window, harness.windows };
        fb_kv_u64s(&doc, 0, "windows", w, 2);
    }
    fb_case_ok(&doc, inner, harness.batch, harness.batches);
}

void case_not(const char *status, const char *reason)
{
    fb_case_not(&doc, status, reason);
}

void say_failed(const struct frame_out *o, const char *program, const char *what, uint64_t err)
{
    char num[21];
    frame_puts(o, "\n");
    frame_puts(o, program);
    frame_puts(o, ": FAILED ");
    frame_puts(o, what);
    frame_puts(o, " error ");
    frame_u64_text(err, num);
    frame_puts(o, num);
    frame_puts(o, "\n");
}
