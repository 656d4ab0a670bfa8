/*
 * Host-side self-test of frame.h (src/run/env/frame.rs's tests compile and
 * run it, then decode its output with the Rust Decoder): an empty message,
 * a samples message built with the JSON writers, a 3000-byte binary
 * message (four chunks) whose bytes are i*7 mod 256, and the answer of a
 * program whose samples outgrew their buffer (fb_error_doc).
 */
#include <unistd.h>
#include "frame.h"

static void put(char c, void *ctx)
{
    (void)ctx;
    (void)!write(1, &c, 1);
}

int main(void)
{
    struct frame_out o = { put, 0 };
    static char mem[4096];
    static uint8_t big[3000];
    struct frame_buf b;
    uint64_t batches[3] = { 0, 18446744073709551615ull, 1234567890123ull };

    frame_send(&o, "hello", 0, "", 0);
    fb_init(&b, mem, sizeof mem);
    fb_raw(&b, "{");
    fb_kv_str(&b, 1, "program", "frame \"selftest\"\\\n");
    fb_raw(&b, ",\"cases\":[");
    fb_case_begin(&b, 1, "ipc.sel4-call");
    fb_params_begin(&b);
    fb_kv_u64(&b, 1, "words", 4);
    fb_kv_str(&b, 0, "space", "intra");
    fb_obj_end(&b);
    fb_case_ok(&b, 1000, batches, 3);
    fb_case_begin(&b, 0, "syscall.getpid");
    fb_case_not(&b, "n/a", "no such call");
    fb_raw(&b, "]}");
    frame_send(&o, "samples", 1, b.p, b.len);
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7 % 256);
    frame_send(&o, "big", 2, big, sizeof big);
    static char small[128];
    fb_init(&b, small, sizeof small);
    fb_raw(&b, "{\"program\":\"selftest\",\"cases\":[");
    for (int i = 0; i < 8; i++)
        fb_case_begin(&b, i == 0, "syscall.getpid");
    if (b.overflow)
        fb_error_doc(&b, small, sizeof small, "selftest", "the samples outgrew their buffer");
    frame_send(&o, "outgrown", 3, b.p, b.len);
    return b.overflow;
}
