/*
 * The decoder on bad input and the decoder tool (tools/rvtrace-decode)
 * end to end on the host:
 *
 * - every input of tests-unit/decoder-corpus (found by fuzzing or written
 *   by hand; format: tests-unit/fuzz-decoder.h) through the library and
 *   the tool: bad-* must give an error (exit status 1), crash-* must only
 *   end cleanly, hang-* must end within HANG_LIMIT seconds;
 * - round trips: random runs through the fuzz image, encoded with every
 *   mode, both XLENs, both packet layouts and with an index field,
 *   decoded by the library and by the tool (also as a wrapped RAM buffer)
 *   give back the instructions of the run;
 * - the tool's errors: truncated and corrupt traces, unusable images,
 *   bad arguments.
 *
 *   test-decoder-corpus [--tap] [-p PATH]      (needs $RVTRACE_DECODE and
 *                                                $DECODER_CORPUS)
 *   test-decoder-corpus --write-seeds DIR      valid inputs, for fuzzing
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include <glib/gstdio.h>
#include <stdarg.h>
#include "fuzz-decoder.h"

#define HANG_LIMIT      5       /* seconds for one hang-* input */
/*
 * Instructions followed for one packet of a hang-* input.  What is tested
 * is that the library bounds its work per packet at all (these inputs ask
 * for up to 2^32 instructions); its default bound, sized for real traces,
 * takes seconds per input on a busy host and more under the sanitizers.
 */
#define HANG_WALK       (1u << 20)
#define MAX_ADDRS       100000
#define ROUND_BLOCKS    3000

/* ----------------------------------------------------------- the tool */

typedef struct ToolRun {
    int status;             /* exit status, or 128 + signal */
    char *out, *err;
} ToolRun;

static const char *tool(void)
{
    return g_getenv("RVTRACE_DECODE");
}

static char *tmp_dir;

static char *tmp_file(const char *name, const void *data, size_t len)
{
    char *path = g_build_filename(tmp_dir, name, NULL);

    g_assert_true(g_file_set_contents(path, data, len, NULL));
    return path;
}

/* Run the tool with args (NULL-terminated), at most limit seconds. */
static ToolRun run_tool(const char *const *args, unsigned limit)
{
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    char *secs = g_strdup_printf("%u", limit);
    ToolRun r = { 0 };
    GError *error = NULL;
    int wait;

    g_ptr_array_add(argv, g_strdup("timeout"));
    g_ptr_array_add(argv, secs);
    g_ptr_array_add(argv, g_strdup(tool()));
    for (; *args; args++) {
        g_ptr_array_add(argv, g_strdup(*args));
    }
    g_ptr_array_add(argv, NULL);
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL,
                               G_SPAWN_SEARCH_PATH, NULL, NULL, &r.out,
                               &r.err, &wait, &error));
    r.status = WIFEXITED(wait) ? WEXITSTATUS(wait) : 128 + WTERMSIG(wait);
    g_ptr_array_free(argv, true);
    return r;
}

static void tool_run_free(ToolRun *r)
{
    g_free(r->out);
    g_free(r->err);
}

/* The tool's arguments for a configuration (decoding from the start). */
static GPtrArray *config_args(const FuzzConfig *c, const char *image)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);

    g_ptr_array_add(a, g_strdup_printf("--raw=%s@0x%x", image,
                                       FUZZ_IMAGE_BASE));
    g_ptr_array_add(a, g_strdup_printf("--xlen=%u",
                                       c->params.iaddress_width_p));
    g_ptr_array_add(a, g_strdup_printf("--src-bits=%u", c->params.src_bits));
    g_ptr_array_add(a, g_strdup_printf("--features=%u", c->features));
    g_ptr_array_add(a, g_strdup(c->params.arch == ETRACE_ARCH_2_0 ?
                                "--arch=2.0" : "--arch=1.1"));
    /* the library's defaults, not QEMU's context width */
    g_ptr_array_add(a, g_strdup("--param=context_width=0"));
    g_ptr_array_add(a, g_strdup_printf("--tvec=M=0x%x", FUZZ_IMAGE_BASE));
    g_ptr_array_add(a, g_strdup_printf("--max-run=%u", FUZZ_MAX_RUN));
    return a;
}

static char *image_file(void)
{
    return tmp_file("image.bin", fuzz_image, sizeof(fuzz_image));
}

/* ------------------------------------------------------------- corpus */

static GPtrArray *corpus_files(const char *prefix)
{
    const char *dir = g_getenv("DECODER_CORPUS");
    GPtrArray *files = g_ptr_array_new_with_free_func(g_free);
    GDir *d = dir ? g_dir_open(dir, 0, NULL) : NULL;
    const char *name;

    while (d && (name = g_dir_read_name(d))) {
        if (g_str_has_prefix(name, prefix) && g_str_has_suffix(name, ".bin")) {
            g_ptr_array_add(files, g_build_filename(dir, name, NULL));
        }
    }
    if (d) {
        g_dir_close(d);
    }
    return files;
}

/* Decode one corpus input with the tool as the harness does. */
static ToolRun corpus_tool_run(const char *path, unsigned limit)
{
    char *data, *image = image_file(), *trace;
    gsize len;
    FuzzConfig c;
    GPtrArray *args;
    ToolRun r;

    g_assert_true(g_file_get_contents(path, &data, &len, NULL));
    g_assert_true(fuzz_config((uint8_t *)data, len, &c));
    trace = tmp_file("trace.bin", data + FUZZ_HEADER, len - FUZZ_HEADER);
    args = config_args(&c, image);
    g_ptr_array_add(args, g_strdup("--summary"));
    g_ptr_array_add(args, g_strdup("--keep-going"));
    g_ptr_array_add(args, g_strdup(trace));
    g_ptr_array_add(args, NULL);
    r = run_tool((const char *const *)args->pdata, limit);
    g_ptr_array_free(args, true);
    g_free(data);
    g_free(image);
    g_free(trace);
    return r;
}

static void test_corpus(void)
{
    static const char *const kinds[] = { "bad-", "crash-" };

    if (!g_getenv("DECODER_CORPUS") || !tool()) {
        g_test_skip("needs $DECODER_CORPUS and $RVTRACE_DECODE");
        return;
    }
    for (unsigned k = 0; k < G_N_ELEMENTS(kinds); k++) {
        GPtrArray *files = corpus_files(kinds[k]);

        for (unsigned i = 0; i < files->len; i++) {
            const char *path = files->pdata[i];
            char *data;
            gsize len;
            FuzzResult fr;
            ToolRun r;

            g_test_message("%s", path);
            g_assert_true(g_file_get_contents(path, &data, &len, NULL));
            g_assert_true(fuzz_decode((uint8_t *)data, len, &fr,
                                      FUZZ_BUDGET, 0));
            r = corpus_tool_run(path, 60);
            /* the tool ends by itself, with 0 or 1 (bad trace) */
            g_assert_cmpint(r.status, <=, 1);
            if (k == 0) {
                g_assert_cmpuint(fr.errors, >, 0);
            }
            /* the tool splits sources that the library harness mixes */
            if (k == 0 && !(data[0] >> 2) % 17) {
                g_assert_cmpint(r.status, ==, 1);
                g_assert_nonnull(strstr(r.err, "byte offset"));
            }
            tool_run_free(&r);
            g_free(data);
        }
        g_ptr_array_free(files, true);
    }
}

/*
 * Inputs that made the decoder run (nearly) forever must not any more:
 * each one is decoded by the library in a subprocess that may take at
 * most HANG_LIMIT seconds.
 */
static void test_hangs(void)
{
    GPtrArray *files;

    if (g_test_subprocess()) {
        char *data;
        gsize len;
        FuzzResult fr;

        g_assert_true(g_file_get_contents(g_getenv("HANG_INPUT"), &data,
                                          &len, NULL));
        fuzz_decode((uint8_t *)data, len, &fr, 0, HANG_WALK);
        g_free(data);
        return;
    }
    if (!g_getenv("DECODER_CORPUS")) {
        g_test_skip("needs $DECODER_CORPUS");
        return;
    }
    /* report every input that still hangs, as a failure, not an abort */
    g_test_set_nonfatal_assertions();
    files = corpus_files("hang-");
    for (unsigned i = 0; i < files->len; i++) {
        g_test_message("%s", (char *)files->pdata[i]);
        g_setenv("HANG_INPUT", files->pdata[i], true);
        g_test_trap_subprocess(NULL, HANG_LIMIT * G_USEC_PER_SEC,
                               G_TEST_SUBPROCESS_DEFAULT);
        g_test_trap_assert_passed();
    }
    g_ptr_array_free(files, true);
}

/* --------------------------------------------------------- round trips */

typedef struct Collect {
    uint64_t *addrs;
    size_t n;
} Collect;

static void collect_insn(void *opaque, const ETraceDecInsn *insn)
{
    Collect *c = opaque;

    if (c->n < MAX_ADDRS) {
        c->addrs[c->n] = insn->addr;
    }
    c->n++;
}

/* Decode with the library; returns the number of errors. */
static uint64_t library_decode(const FuzzConfig *c, const uint8_t *bytes,
                               size_t len, Collect *out)
{
    ETraceDecoderConfig cfg = {
        .params = c->params, .options = c->options,
        .read_parcel = fuzz_read_parcel, .insn = collect_insn,
        .max_straight_run = FUZZ_MAX_RUN, .opaque = out,
    };
    ETraceDecoder *d;
    ETraceDecStats st;

    cfg.xtvec[3] = FUZZ_IMAGE_BASE;
    d = etrace_decoder_new(&cfg);
    g_assert_nonnull(d);
    etrace_decoder_feed(d, bytes, len);
    etrace_decoder_finish(d);
    etrace_decoder_stats(d, &st);
    etrace_decoder_free(d);
    return st.errors;
}

/* Addresses the tool printed (lines "0x..." or "[id] 0x..."). */
static size_t parse_addresses(const char *out, uint64_t *addrs)
{
    char **lines = g_strsplit(out, "\n", -1);
    size_t n = 0;

    for (char **l = lines; *l; l++) {
        const char *p = *l;

        if (*p == '[') {
            p = strstr(p, "] ");
            p = p ? p + 2 : "";
        }
        if (g_str_has_prefix(p, "0x") && n < MAX_ADDRS) {
            addrs[n++] = g_ascii_strtoull(p, NULL, 16);
        }
    }
    g_strfreev(lines);
    return n;
}

static ToolRun tool_decode(const FuzzConfig *c, const char *trace,
                           const char *extra)
{
    char *image = image_file();
    GPtrArray *args = config_args(c, image);
    ToolRun r;

    if (extra) {
        g_ptr_array_add(args, g_strdup(extra));
    }
    g_ptr_array_add(args, g_strdup(trace));
    g_ptr_array_add(args, NULL);
    r = run_tool((const char *const *)args->pdata, 60);
    g_ptr_array_free(args, true);
    g_free(image);
    return r;
}

/*
 * The stream as a RAM sink of size bytes (< len) leaves it after
 * wrapping: its last size bytes, the oldest at offset wp.
 */
static uint8_t *as_ring(const uint8_t *s, size_t len, size_t size,
                        size_t wp)
{
    uint8_t *ring = g_malloc(size);

    for (size_t i = 0; i < size; i++) {
        ring[(wp + i) % size] = s[len - size + i];
    }
    return ring;
}

static void check_wrapped(const FuzzConfig *c, const FuzzStream *s,
                          const uint64_t *walk, size_t nwalk,
                          uint64_t *got)
{
    size_t size = s->len * 2 / 3, wp = size / 3, n;
    uint8_t *ring = as_ring(s->buf, s->len, size, wp);
    char *trace = tmp_file("ring.bin", ring, size);
    char *wrap = g_strdup_printf("--wrap=%zu", wp);
    ToolRun r = tool_decode(c, trace, wrap);

    g_assert_cmpint(r.status, ==, 0);
    n = parse_addresses(r.out, got);
    /* from the first sync of the ring to the end of the run */
    g_assert_cmpuint(n, >, 0);
    g_assert_cmpuint(n, <=, nwalk);
    for (size_t i = 0; i < n; i++) {
        g_assert_cmphex(got[i], ==, walk[nwalk - n + i]);
    }
    tool_run_free(&r);
    g_free(ring);
    g_free(trace);
    g_free(wrap);
}

static void roundtrip_one(const FuzzConfig *c, uint64_t seed)
{
    g_autofree uint64_t *walk = g_new(uint64_t, MAX_ADDRS);
    g_autofree uint64_t *got = g_new(uint64_t, MAX_ADDRS);
    FuzzStream s = { 0 };
    Collect lib = { .addrs = got };
    size_t nwalk, n;
    char *trace;
    ToolRun r;

    fuzz_generate(c, seed, ROUND_BLOCKS, &s, walk, MAX_ADDRS, &nwalk);
    g_assert_cmpuint(nwalk, >, ROUND_BLOCKS);
    g_assert_cmpuint(nwalk, <=, MAX_ADDRS);
    g_assert_cmpuint(library_decode(c, s.buf, s.len, &lib), ==, 0);
    g_assert_cmpuint(lib.n, ==, nwalk);
    g_assert_true(!memcmp(got, walk, nwalk * sizeof(*walk)));
    if (tool()) {
        trace = tmp_file("trace.bin", s.buf, s.len);
        r = tool_decode(c, trace, NULL);
        g_assert_cmpint(r.status, ==, 0);
        n = parse_addresses(r.out, got);
        g_assert_cmpuint(n, ==, nwalk);
        g_assert_true(!memcmp(got, walk, nwalk * sizeof(*walk)));
        tool_run_free(&r);
        g_free(trace);
        check_wrapped(c, &s, walk, nwalk, got);
    }
    free(s.buf);
}

/* Every mode; both XLENs and layouts; with and without an index field. */
static const uint8_t round_features[] = {
    0, 1, 2, 4, 72, 200, 16, 32, 254, 255,
};

static void test_roundtrip(void)
{
    for (unsigned xa = 0; xa < 4; xa++) {
        for (unsigned f = 0; f < G_N_ELEMENTS(round_features); f++) {
            uint8_t hdr[FUZZ_HEADER] = {
                xa | (f % 2 ? 3 << 2 : 0), round_features[f], 0,
            };
            FuzzConfig c;

            fuzz_config(hdr, sizeof(hdr), &c);
            roundtrip_one(&c, xa * 100 + f);
        }
    }
}

/* ------------------------------------------------------ the tool's errors */

/* Run the tool with the arguments after message (NULL-terminated). */
static void expect_tool(int status, const char *message, ...)
{
    const char *args[16];
    unsigned n = 0;
    va_list ap;
    ToolRun r;

    va_start(ap, message);
    while (n < G_N_ELEMENTS(args) - 1 && (args[n] = va_arg(ap, char *))) {
        n++;
    }
    va_end(ap);
    args[n] = NULL;
    r = run_tool(args, 60);
    g_test_message("%s: status %d, %s", args[0], r.status, r.err);
    g_assert_cmpint(r.status, ==, status);
    g_assert_nonnull(strstr(r.err, message));
    tool_run_free(&r);
}

static void test_tool_errors(void)
{
    uint8_t hdr[FUZZ_HEADER] = { 0, 254, 0 };
    g_autofree char *image = NULL, *raw = NULL, *trace = NULL;
    g_autofree char *cut = NULL, *bad = NULL, *text = NULL, *x86 = NULL;
    g_autofree char *empty = NULL, *padding = NULL;
    uint8_t elf_x86[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
    const char *ctx0 = "--param=context_width=0";
    uint64_t walk[4096];
    FuzzStream s = { 0 };
    FuzzConfig c;
    size_t n;

    if (!tool()) {
        g_test_skip("needs $RVTRACE_DECODE");
        return;
    }
    fuzz_config(hdr, sizeof(hdr), &c);
    fuzz_generate(&c, 7, 100, &s, walk, G_N_ELEMENTS(walk), &n);
    image = image_file();
    raw = g_strdup_printf("--raw=%s@0x%x", image, FUZZ_IMAGE_BASE);
    trace = tmp_file("whole.bin", s.buf, s.len);
    /* a packet cut by the end of the trace */
    cut = tmp_file("cut.bin", s.buf, s.len - 1);
    expect_tool(1, "truncated packet at the end of the stream",
                raw, "--features=254", ctx0, cut, NULL);
    /* the header of the third packet: flow bits but no payload length */
    for (unsigned i = 0, at = 0; i < 3; i++) {
        if (i == 2) {
            s.buf[at] = 0x20;
        }
        at += 1 + (s.buf[at] & 0x1f);
    }
    bad = tmp_file("bad.bin", s.buf, s.len);
    expect_tool(1, "bad packet header 0x20", raw, "--features=254", ctx0,
                bad, NULL);
    /* no packet at all: an empty file, padding only, a directory */
    empty = tmp_file("empty.bin", "", 0);
    expect_tool(1, "no packet in the trace (0 bytes)", raw, empty, NULL);
    padding = tmp_file("padding.bin", "\0\0\0\0", 4);
    expect_tool(1, "no packet in the trace (4 bytes)", raw, padding, NULL);
    expect_tool(2, "Is a directory", raw, tmp_dir, NULL);
    /* no image; not an ELF file; an ELF file of another machine */
    expect_tool(2, "no program image", trace, NULL);
    text = tmp_file("text.elf", "hello", 5);
    expect_tool(2, "not an ELF file", "-e", text, trace, NULL);
    elf_x86[18] = 62;   /* EM_X86_64 */
    x86 = tmp_file("x86.elf", elf_x86, sizeof(elf_x86));
    expect_tool(2, "not a RISC-V ELF file", "-e", x86, trace, NULL);
    /* arguments */
    expect_tool(2, "is not inside", raw, "--wrap=100000", trace, NULL);
    expect_tool(2, "--xlen", raw, "--xlen=48", trace, NULL);
    expect_tool(2, "--param", raw, "--param=bpred_size=99", trace, NULL);
    expect_tool(2, "not a number", raw, "--wrap=12z", trace, NULL);
    free(s.buf);
}

/* ------------------------------------------------------------------ seeds */

static void remove_tmp_dir(void)
{
    GDir *d = g_dir_open(tmp_dir, 0, NULL);
    const char *name;

    while (d && (name = g_dir_read_name(d))) {
        g_autofree char *path = g_build_filename(tmp_dir, name, NULL);

        g_remove(path);
    }
    if (d) {
        g_dir_close(d);
    }
    g_rmdir(tmp_dir);
}

/* Valid inputs for every configuration of test_roundtrip. */
static int write_seeds(const char *dir)
{
    for (unsigned x = 0; x < 4; x++) {
        for (unsigned f = 0; f < G_N_ELEMENTS(round_features); f++) {
            uint8_t hdr[FUZZ_HEADER] = { x, round_features[f], f };
            g_autofree uint64_t *walk = g_new(uint64_t, MAX_ADDRS);
            FuzzStream s = { 0 };
            FuzzConfig c;
            size_t n;
            g_autofree char *name = NULL;
            GString *data = g_string_new_len((char *)hdr, sizeof(hdr));

            fuzz_config(hdr, sizeof(hdr), &c);
            fuzz_generate(&c, x * 31 + f, 40, &s, walk, MAX_ADDRS, &n);
            g_string_append_len(data, (char *)s.buf, s.len);
            name = g_strdup_printf("%s/seed-%u-%u.bin", dir, x, f);
            if (!g_file_set_contents(name, data->str, data->len, NULL)) {
                return 1;
            }
            g_string_free(data, true);
            free(s.buf);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int ret;

    if (argc == 3 && !strcmp(argv[1], "--write-seeds")) {
        return write_seeds(argv[2]);
    }
    g_test_init(&argc, &argv, NULL);
    tmp_dir = g_dir_make_tmp("decoder-corpus-XXXXXX", NULL);
    g_assert_nonnull(tmp_dir);
    g_test_add_func("/decoder-corpus/inputs", test_corpus);
    g_test_add_func("/decoder-corpus/hangs", test_hangs);
    g_test_add_func("/decoder-corpus/roundtrip", test_roundtrip);
    g_test_add_func("/decoder-corpus/tool-errors", test_tool_errors);
    ret = g_test_run();
    if (!ret) {
        remove_tmp_dir();   /* kept for inspection after a failure */
    }
    return ret;
}
