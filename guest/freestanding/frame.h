/*
 * frame.h: the framing of src/run/env/frame.rs for freestanding C guests
 * (a root task on a microkernel: no libc, no libgcc, 32 or 64 bits).
 *
 * A message is cut into chunks of FRAME_CHUNK bytes; each chunk is one line
 * `@@OSCYCLES <kind> <id> <i>/<n> <crc32 as 8 hex> <base64>@@`, with a
 * newline before and after, sent twice. The host's Decoder keeps the lines
 * whose CRC-32 matches and assembles the message.
 *
 * Output goes through a function the guest gives (one character at a time:
 * a serial port, an IOPort capability). Beside the framing: a bounded text
 * buffer with JSON writers (strings, unsigned decimals without 64-bit
 * division, arrays) to build the samples message a guest program sends, as
 * src/run/env/program/ reads it (a program that cannot make it sends
 * fb_error_doc's answer instead):
 *
 *   {"program": "...", "cases": [
 *     {"benchmark": "ipc.sel4-call", "params": {"words": 4, ...},
 *      "status": "ok", "inner": 1000, "batch_cycles": [123456, ...]},
 *     {"benchmark": "...", "status": "n/a", "reason": "..."}]}
 *
 * Everything is `static`: include it in one translation unit or several.
 */
#ifndef OSCYCLES_FRAME_H
#define OSCYCLES_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define FRAME_CHUNK 768

/* Where the framed lines go: put(c, ctx) for each character. */
struct frame_out {
    void (*put)(char c, void *ctx);
    void *ctx;
};

static void frame_puts(const struct frame_out *o, const char *s)
{
    while (*s)
        o->put(*s++, o->ctx);
}

static uint32_t frame_crc32(const uint8_t *p, size_t n)
{
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc & 1) ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
    }
    return ~crc;
}

/* n / 10 and n % 10 of a 64-bit number in 16-bit limbs: 32-bit arithmetic
 * only (no __udivdi3 from a libgcc a freestanding 32-bit guest lacks). */
static uint64_t frame_div10(uint64_t n, unsigned *rem)
{
    uint32_t r = 0;
    uint64_t q = 0;
    for (int shift = 48; shift >= 0; shift -= 16) {
        uint32_t cur = (r << 16) | (uint32_t)((n >> shift) & 0xFFFFu);
        q |= (uint64_t)(cur / 10u) << shift;
        r = cur % 10u;
    }
    *rem = r;
    return q;
}

/* `v` in decimal into `buf` (at least 21 bytes), NUL-terminated; its length. */
static size_t frame_u64_text(uint64_t v, char *buf)
{
    char tmp[21];
    size_t n = 0;
    do {
        unsigned d;
        v = frame_div10(v, &d);
        tmp[n++] = (char)('0' + d);
    } while (v);
    for (size_t i = 0; i < n; i++)
        buf[i] = tmp[n - 1 - i];
    buf[n] = 0;
    return n;
}

static void frame_base64(const struct frame_out *o, const uint8_t *p, size_t n)
{
    static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        size_t k = n - i < 3 ? n - i : 3;
        uint32_t v = (uint32_t)p[i] << 16;
        if (k > 1)
            v |= (uint32_t)p[i + 1] << 8;
        if (k > 2)
            v |= p[i + 2];
        for (size_t j = 0; j < 4; j++)
            o->put(j <= k ? b64[(v >> (18 - 6 * j)) & 63] : '=', o->ctx);
    }
}

static void frame_line(const struct frame_out *o, const char *kind, uint32_t id, size_t i, size_t n,
                       const uint8_t *p, size_t len)
{
    static const char hex[] = "0123456789abcdef";
    char num[21];
    uint32_t crc = frame_crc32(p, len);
    frame_puts(o, "\n@@OSCYCLES ");
    frame_puts(o, kind);
    o->put(' ', o->ctx);
    frame_u64_text(id, num);
    frame_puts(o, num);
    o->put(' ', o->ctx);
    frame_u64_text(i, num);
    frame_puts(o, num);
    o->put('/', o->ctx);
    frame_u64_text(n, num);
    frame_puts(o, num);
    o->put(' ', o->ctx);
    for (int s = 28; s >= 0; s -= 4)
        o->put(hex[(crc >> s) & 15], o->ctx);
    o->put(' ', o->ctx);
    frame_base64(o, p, len);
    frame_puts(o, "@@\n");
}

/* Sends `payload` as message `kind`/`id`: each chunk's line twice. */
static void frame_send(const struct frame_out *o, const char *kind, uint32_t id, const void *payload, size_t len)
{
    const uint8_t *p = (const uint8_t *)payload;
    size_t n = len == 0 ? 1 : (len + FRAME_CHUNK - 1) / FRAME_CHUNK;
    for (size_t i = 0; i < n; i++) {
        size_t off = i * FRAME_CHUNK;
        size_t k = len - off < FRAME_CHUNK ? len - off : FRAME_CHUNK;
        if (len == 0)
            k = 0;
        frame_line(o, kind, id, i + 1, n, p + off, k);
        frame_line(o, kind, id, i + 1, n, p + off, k);
    }
}

/* ---- a bounded text buffer and JSON writers ---------------------------- */

struct frame_buf {
    char *p;
    size_t len, cap;
    int overflow; /* set when something did not fit (the text is then cut) */
};

static void fb_init(struct frame_buf *b, char *mem, size_t cap)
{
    b->p = mem;
    b->len = 0;
    b->cap = cap;
    b->overflow = 0;
}

static void fb_char(struct frame_buf *b, char c)
{
    if (b->len < b->cap)
        b->p[b->len++] = c;
    else
        b->overflow = 1;
}

/* Raw text (JSON punctuation, keys the caller knows are clean). */
static void fb_raw(struct frame_buf *b, const char *s)
{
    while (*s)
        fb_char(b, *s++);
}

/* A JSON string: quotes, with ", \ and control characters escaped. */
static void fb_str(struct frame_buf *b, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    fb_char(b, '"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            fb_char(b, '\\');
            fb_char(b, (char)c);
        } else if (c < 0x20) {
            fb_raw(b, "\\u00");
            fb_char(b, hex[c >> 4]);
            fb_char(b, hex[c & 15]);
        } else {
            fb_char(b, (char)c);
        }
    }
    fb_char(b, '"');
}

static void fb_u64(struct frame_buf *b, uint64_t v)
{
    char num[21];
    frame_u64_text(v, num);
    fb_raw(b, num);
}

/* Starts `b` again (over `mem`, `cap` bytes) as the answer of a program
 * that could not make its samples (they outgrew their buffer, say):
 * {"program": PROGRAM, "error": WHY, "cases": []}. The host fails every
 * planned case with WHY: the error path of every C guest. */
static void fb_error_doc(struct frame_buf *b, char *mem, size_t cap, const char *program, const char *why)
{
    fb_init(b, mem, cap);
    fb_raw(b, "{\"program\":");
    fb_str(b, program);
    fb_raw(b, ",\"error\":");
    fb_str(b, why);
    fb_raw(b, ",\"cases\":[]}");
}

/* `"key":` (the key is written as a JSON string). */
static void fb_key(struct frame_buf *b, const char *key)
{
    fb_str(b, key);
    fb_char(b, ':');
}

/* `"key":"value"` and `"key":123`, each after a comma unless first. */
static void fb_kv_str(struct frame_buf *b, int first, const char *key, const char *value)
{
    if (!first)
        fb_char(b, ',');
    fb_key(b, key);
    fb_str(b, value);
}

static void fb_kv_u64(struct frame_buf *b, int first, const char *key, uint64_t value)
{
    if (!first)
        fb_char(b, ',');
    fb_key(b, key);
    fb_u64(b, value);
}

/* `"key":[v0,v1,...]` of unsigned numbers. */
static void fb_kv_u64s(struct frame_buf *b, int first, const char *key, const uint64_t *v, size_t n)
{
    if (!first)
        fb_char(b, ',');
    fb_key(b, key);
    fb_char(b, '[');
    for (size_t i = 0; i < n; i++) {
        if (i)
            fb_char(b, ',');
        fb_u64(b, v[i]);
    }
    fb_char(b, ']');
}

/*
 * One case of the samples message, as program.rs reads it. A case opens
 * with fb_case_begin (the comma before it unless first, `{"benchmark":..`),
 * then the caller adds `"params":{...}` through fb_params_begin/fb_kv_* /
 * fb_obj_end if the case has any, then one of fb_case_ok / fb_case_not.
 */
static void fb_case_begin(struct frame_buf *b, int first, const char *benchmark)
{
    if (!first)
        fb_char(b, ',');
    fb_char(b, '{');
    fb_kv_str(b, 1, "benchmark", benchmark);
}

static void fb_params_begin(struct frame_buf *b)
{
    fb_raw(b, ",\"params\":{");
}

static void fb_obj_end(struct frame_buf *b)
{
    fb_char(b, '}');
}

/* A measured case: per batch, the cycles (or instructions) its `inner`
 * operations took; ends the case. */
static void fb_case_ok(struct frame_buf *b, uint64_t inner, const uint64_t *batch_cycles, size_t batches)
{
    fb_kv_str(b, 0, "status", "ok");
    fb_kv_u64(b, 0, "inner", inner);
    fb_kv_u64s(b, 0, "batch_cycles", batch_cycles, batches);
    fb_char(b, '}');
}

/* A case not measured: `status` is "n/a" or "failed"; ends the case. */
static void fb_case_not(struct frame_buf *b, const char *status, const char *reason)
{
    fb_kv_str(b, 0, "status", status);
    fb_kv_str(b, 0, "reason", reason);
    fb_char(b, '}');
}

#endif
