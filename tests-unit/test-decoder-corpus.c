/*
 * The decoder on bad input and the decoder tool (tools/rvtrace-decode)
 * end to end on the host:
 *
 * - every input of tests-unit/decoder-corpus (found by fuzzing or written
 *   by hand; format: tests-unit/fuzz-decoder.h) through the library and
 *   the tool: bad-* must give an error (exit status 1), gap-* a gap where
 *   the trace leaves the image and no error (status 0), crash-* must only
 *   end cleanly, hang-* must end within HANG_LIMIT seconds;
 * - round trips: random runs through the fuzz image, encoded with every
 *   mode, both XLENs, both packet layouts and with an index field,
 *   decoded by the library and by the tool (also as a wrapped RAM buffer)
 *   give back the instructions of the run;
 * - the tool's errors: truncated and corrupt traces, unusable images,
 *   bad arguments;
 * - the tool's program image and summary: an ELF file moved to a load
 *   address (-e FILE@ADDR), symbols from nm/System.map/kallsyms text
 *   (--symbols), which symbol an address belongs to, instructions per
 *   privilege, gaps where the trace leaves the image.
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
#include "ntrace.h"

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

/* The tool's tests: false, and the test skipped, without the tool. */
static bool have_tool(void)
{
    if (!tool()) {
        g_test_skip("needs $RVTRACE_DECODE");
        return false;
    }
    return true;
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

/*
 * The tool's arguments for a configuration (decoding from the start),
 * but the image.
 */
static GPtrArray *param_args(const FuzzConfig *c)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);

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

/* The same with the fuzz image as a raw binary. */
static GPtrArray *config_args(const FuzzConfig *c, const char *image)
{
    GPtrArray *a = param_args(c);

    g_ptr_array_insert(a, 0, g_strdup_printf("--raw=%s@0x%x", image,
                                             FUZZ_IMAGE_BASE));
    return a;
}

static char *image_file(void)
{
    return tmp_file("image.bin", fuzz_image, sizeof(fuzz_image));
}

/*
 * The fuzz image's bytes [off, off + len) in file name, and the --raw
 * argument that loads them at their address.
 */
static char *raw_image_arg(const char *name, size_t off, size_t len)
{
    g_autofree char *path = tmp_file(name, fuzz_image + off, len);

    return g_strdup_printf("--raw=%s@0x%x", path,
                           FUZZ_IMAGE_BASE + (unsigned)off);
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
    static const char *const kinds[] = { "bad-", "crash-", "gap-" };

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
            /* a gap where the trace leaves the image, which is no error */
            if (k == 2) {
                g_assert_cmpuint(fr.errors, ==, 0);
                g_assert_cmpuint(fr.no_image_gaps, >, 0);
                g_assert_cmpint(r.status, ==, 0);
                g_assert_nonnull(strstr(r.out, "gaps (no image)      1"));
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
    g_autofree char *raw = NULL, *trace = NULL;
    g_autofree char *cut = NULL, *bad = NULL, *text = NULL, *x86 = NULL;
    g_autofree char *empty = NULL, *padding = NULL;
    uint8_t elf_x86[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
    const char *ctx0 = "--param=context_width=0";
    uint64_t walk[4096];
    FuzzStream s = { 0 };
    FuzzConfig c;
    size_t n;

    if (!have_tool()) {
        return;
    }
    fuzz_config(hdr, sizeof(hdr), &c);
    fuzz_generate(&c, 7, 100, &s, walk, G_N_ELEMENTS(walk), &n);
    raw = raw_image_arg("image.bin", 0, sizeof(fuzz_image));
    trace = tmp_file("whole.bin", s.buf, s.len);
    /* bad input inside the flow names the last instruction before it */
    expect_tool(1, "than the limit (max_packet_walk) (after 0x8000",
                raw, "--features=254", ctx0, "--max-walk=2", trace, NULL);
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

/* ----------------------------------------- the image and the summary */

/*
 * The symbols these tests give the fuzz image (offsets from its start):
 * a function with a size that ends before the next symbol, labels
 * without one (the last one up to the end of its segment).  Code runs
 * at 0x00-0x20 and 0x3a-0x4a (fuzz-decoder.h).
 */
typedef struct TestSym {
    const char *name;
    uint32_t off, size;
} TestSym;

static const TestSym test_syms[] = {
    { "head", 0x00, 0x0c }, { "mid", 0x14, 0 }, { "func", 0x3a, 8 },
    { "tail", 0x42, 0 },
};

/* Whose an offset of the image is with test_syms ("" for none). */
static const char *test_sym_of(uint32_t off)
{
    return off < 0x0c ? "head" : off < 0x14 ? "" : off < 0x3a ? "mid" :
           off < 0x42 ? "func" : "tail";
}

/* v in n bytes at at (bytes past 8 are 0); b grows with zero bytes. */
static void put_le(GByteArray *b, size_t at, uint64_t v, unsigned n)
{
    size_t len = b->len;

    if (len < at + n) {
        g_byte_array_set_size(b, at + n);
        memset(b->data + len, 0, at + n - len);
    }
    for (unsigned i = 0; i < n; i++) {
        b->data[at + i] = i < 8 ? v >> (8 * i) : 0;
    }
}

/*
 * An ELF64 RISC-V file (named name in the temporary directory) with the
 * fuzz image as its one PT_LOAD segment at vaddr, a section for it and a
 * symbol table of test_syms.
 */
static char *elf_file(const char *name, uint64_t vaddr)
{
    enum { CODE = 0x100, EH = 64, PH = 56, SH = 64, SYM = 24 };
    g_autoptr(GByteArray) b = g_byte_array_new();
    GString *str = g_string_new_len("", 1);
    size_t nsym = G_N_ELEMENTS(test_syms) + 1, strtab, symtab, shoff;
    char *path;

    g_byte_array_set_size(b, CODE);
    memset(b->data, 0, CODE);
    memcpy(b->data, "\x7f" "ELF\x02\x01\x01", 7);
    put_le(b, 16, 3, 2);                /* ET_DYN */
    put_le(b, 18, 243, 2);              /* EM_RISCV */
    put_le(b, 20, 1, 4);
    put_le(b, 24, vaddr, 8);
    put_le(b, 32, EH, 8);               /* e_phoff */
    put_le(b, 52, EH, 2);
    put_le(b, 54, PH, 2);
    put_le(b, 56, 1, 2);
    put_le(b, 58, SH, 2);
    put_le(b, 60, 4, 2);                /* null, .text, .symtab, .strtab */
    put_le(b, EH, 1, 4);                /* PT_LOAD, R+X */
    put_le(b, EH + 4, 5, 4);
    put_le(b, EH + 8, CODE, 8);
    put_le(b, EH + 16, vaddr, 8);
    put_le(b, EH + 24, vaddr, 8);
    put_le(b, EH + 32, sizeof(fuzz_image), 8);
    put_le(b, EH + 40, sizeof(fuzz_image), 8);
    g_byte_array_append(b, fuzz_image, sizeof(fuzz_image));
    strtab = b->len;
    for (size_t i = 0; i < G_N_ELEMENTS(test_syms); i++) {
        g_string_append_len(str, test_syms[i].name,
                            strlen(test_syms[i].name) + 1);
    }
    g_byte_array_append(b, (uint8_t *)str->str, str->len);
    symtab = (b->len + 7) & ~7u;
    for (size_t i = 1, name = 1; i < nsym; i++) {
        const TestSym *t = &test_syms[i - 1];
        size_t at = symtab + i * SYM;

        put_le(b, at, name, 4);
        put_le(b, at + 4, t->size ? 0x12 : 0x10, 1);   /* FUNC, NOTYPE */
        put_le(b, at + 6, 1, 2);                        /* .text */
        put_le(b, at + 8, vaddr + t->off, 8);
        put_le(b, at + 16, t->size, 8);
        name += strlen(t->name) + 1;
    }
    put_le(b, symtab, 0, SYM);          /* the null symbol */
    shoff = b->len;
    put_le(b, 40, shoff, 8);
    put_le(b, shoff + 4 * SH - 1, 0, 1);
    put_le(b, shoff + SH + 4, 1, 4);    /* .text: PROGBITS */
    put_le(b, shoff + SH + 16, vaddr, 8);
    put_le(b, shoff + SH + 24, CODE, 8);
    put_le(b, shoff + SH + 32, sizeof(fuzz_image), 8);
    put_le(b, shoff + 2 * SH + 4, 2, 4);    /* .symtab, its strings in 3 */
    put_le(b, shoff + 2 * SH + 24, symtab, 8);
    put_le(b, shoff + 2 * SH + 32, nsym * SYM, 8);
    put_le(b, shoff + 2 * SH + 40, 3, 4);
    put_le(b, shoff + 2 * SH + 56, SYM, 8);
    put_le(b, shoff + 3 * SH + 4, 3, 4);    /* .strtab */
    put_le(b, shoff + 3 * SH + 24, strtab, 8);
    put_le(b, shoff + 3 * SH + 32, str->len, 8);
    path = tmp_file(name, b->data, b->len);
    g_string_free(str, true);
    return path;
}

/* A trace of a run through the fuzz image (RV64, delta mode). */
typedef struct ImageRun {
    FuzzConfig c;
    uint64_t *walk;
    size_t nwalk;
    char *trace;
} ImageRun;

static void image_run_init(ImageRun *r)
{
    uint8_t hdr[FUZZ_HEADER] = { 0 };
    FuzzStream s = { 0 };

    fuzz_config(hdr, sizeof(hdr), &r->c);
    r->walk = g_new(uint64_t, MAX_ADDRS);
    fuzz_generate(&r->c, 11, ROUND_BLOCKS, &s, r->walk, MAX_ADDRS,
                  &r->nwalk);
    g_assert_cmpuint(r->nwalk, <=, MAX_ADDRS);
    r->trace = tmp_file("image-trace.bin", s.buf, s.len);
    free(s.buf);
}

static void image_run_free(ImageRun *r)
{
    g_free(r->walk);
    g_free(r->trace);
}

/* The tool on the run's trace with more arguments (NULL-terminated). */
static ToolRun image_decode(const ImageRun *r, ...)
{
    GPtrArray *args = param_args(&r->c);
    const char *a;
    va_list ap;
    ToolRun t;

    va_start(ap, r);
    while ((a = va_arg(ap, const char *))) {
        g_ptr_array_add(args, g_strdup(a));
    }
    va_end(ap);
    g_ptr_array_add(args, g_strdup(r->trace));
    g_ptr_array_add(args, NULL);
    t = run_tool((const char *const *)args->pdata, 60);
    g_ptr_array_free(args, true);
    g_test_message("status %d, %s", t.status, t.err);
    return t;
}

/* The tool printed the run's instructions, and nothing went wrong. */
static void check_all_addresses(const ImageRun *r, ToolRun *t)
{
    g_autofree uint64_t *got = g_new(uint64_t, MAX_ADDRS);

    g_assert_cmpint(t->status, ==, 0);
    g_assert_cmpstr(t->err, ==, "");
    g_assert_cmpuint(parse_addresses(t->out, got), ==, r->nwalk);
    g_assert_true(!memcmp(got, r->walk, r->nwalk * sizeof(*got)));
    tool_run_free(t);
}

/*
 * A summary's hottest functions ("(no symbol)" is "") against the run's
 * instructions counted by who(offset); its instructions per privilege
 * (all M).
 */
static void check_hottest(const ImageRun *r, ToolRun *t,
                          const char *(*who)(uint32_t))
{
    g_autoptr(GHashTable) want = g_hash_table_new(g_str_hash, g_str_equal);
    g_autofree char *privs = g_strdup_printf(
        "\nprivilege            M %zu, S 0, U 0\n", r->nwalk);
    const char *p = strstr(t->out, "hottest functions (instructions):\n");
    char **lines;
    unsigned n = 0;

    g_assert_cmpint(t->status, ==, 0);
    g_assert_nonnull(strstr(t->out, privs));
    for (size_t i = 0; i < r->nwalk; i++) {
        const char *name = who(r->walk[i] - FUZZ_IMAGE_BASE);
        gpointer old = g_hash_table_lookup(want, name);

        g_hash_table_insert(want, (gpointer)name,
                            GSIZE_TO_POINTER(GPOINTER_TO_SIZE(old) + 1));
    }
    g_assert_nonnull(p);
    lines = g_strsplit(strchr(p, '\n') + 1, "\n", -1);
    for (char **l = lines; *l && **l; l++, n++) {
        unsigned long long count;
        double pct;
        int at = 0;
        const char *name;

        g_assert_cmpint(sscanf(*l, " %lf%% %llu %n", &pct, &count, &at), ==,
                        2);
        name = strcmp(*l + at, "(no symbol)") ? *l + at : "";
        g_test_message("%s: %llu", name, count);
        g_assert_cmpuint(count, ==,
                         GPOINTER_TO_SIZE(g_hash_table_lookup(want, name)));
    }
    g_assert_cmpuint(n, ==, g_hash_table_size(want));
    g_strfreev(lines);
    tool_run_free(t);
}

/*
 * -e FILE@ADDR: an ELF file linked at 0 (position independent, like
 * OpenSBI's fw_dynamic.elf) loaded at the fuzz image's address, its
 * symbols moved with it.  A file name with an '@' not followed by a
 * number loads as it is.
 */
static void test_tool_elf_at(void)
{
    g_autofree char *at0 = NULL, *arg = NULL, *named = NULL;
    ImageRun r;
    ToolRun t;

    if (!have_tool()) {
        return;
    }
    image_run_init(&r);
    at0 = elf_file("linked-at-0.elf", 0);
    arg = g_strdup_printf("%s@0x%x", at0, FUZZ_IMAGE_BASE);
    t = image_decode(&r, "-e", arg, NULL);
    check_all_addresses(&r, &t);
    t = image_decode(&r, "-s", "-e", arg, NULL);
    check_hottest(&r, &t, test_sym_of);
    /* -j -d: the symbols moved too (objdump is not needed for them) */
    t = image_decode(&r, "-j", "-d", "--objdump=true", "-e", arg, NULL);
    g_assert_cmpint(t.status, ==, 0);
    g_assert_nonnull(strstr(t.out, "\"addr\":\"0x8000003c\",\"priv\":3,"
                            "\"len\":2,\"sym\":\"func+0x2\""));
    tool_run_free(&t);
    named = elf_file("fw@linked.elf", FUZZ_IMAGE_BASE);
    t = image_decode(&r, "-e", named, NULL);
    check_all_addresses(&r, &t);
    image_run_free(&r);
}

/*
 * The symbols of test_syms as lines of nm, nm -S, System.map and
 * /proc/kallsyms at base, among lines that must be skipped: other
 * types, local labels, bad numbers, too many fields, a NUL byte and a
 * line longer than 4 KiB whose end would be a symbol.
 */
static char *symbols_file(const char *name, uint64_t base)
{
    g_autoptr(GString) t = g_string_new("# nm output\n");

    g_string_append_printf(t, "%016" PRIx64 " %016x T head\n", base, 0xc);
    g_string_append_printf(t, "%" PRIx64 " T mid\n", base + 0x14);
    g_string_append_printf(t, "%016" PRIx64 " t func\t[mod]\n", base + 0x3a);
    g_string_append_printf(t, "0x%" PRIx64 " W tail\r\n", base + 0x42);
    /* not text symbols, or not names worth showing */
    g_string_append_printf(t, "%016" PRIx64 " D data\n", base + 0x10);
    g_string_append_printf(t, "%016" PRIx64 " t .Llocal\n", base + 0x4);
    g_string_append_printf(t, "%016" PRIx64 " t $x\n", base + 0x4);
    /* lines that do not parse */
    g_string_append_printf(t, "%016" PRIx64 " T two words here\n",
                           base + 0x6);
    g_string_append_printf(t, "1%016" PRIx64 " T too_wide\n", base + 0x6);
    g_string_append_printf(t, "%016" PRIx64 " TT type\n", base + 0x6);
    g_string_append(t, "zzzz T junk\n80000000\n80000000 T\n\n \t\n");
    g_string_append_printf(t, "%" PRIx64 " T nul", base + 0x18);
    g_string_append_c(t, '\0');
    g_string_append(t, "byte\n#");
    for (unsigned i = 0; i < 5000; i++) {
        g_string_append_c(t, 'x');
    }
    g_string_append_printf(t, "\n#%4094s%" PRIx64 " T bogus\n", "",
                           base + 0x1c);
    return tmp_file(name, t->str, t->len);
}

/*
 * --symbols FILE[@BIAS]: the text symbols of nm-like lines, with a bias
 * (also negative), used by the summary, -j and -d like an ELF file's.
 * Lines that do not parse, and a file of random bytes, are skipped.
 */
static void test_tool_symbols(void)
{
    g_autofree char *raw = NULL, *abs = NULL, *low = NULL;
    g_autofree char *high = NULL, *low_arg = NULL, *high_arg = NULL;
    g_autofree char *noise = NULL, *bytes = g_malloc(1 << 20);
    uint64_t x = 1;
    ImageRun r;
    ToolRun t;

    if (!have_tool()) {
        return;
    }
    image_run_init(&r);
    raw = raw_image_arg("image.bin", 0, sizeof(fuzz_image));
    abs = symbols_file("abs.map", FUZZ_IMAGE_BASE);
    low = symbols_file("low.map", 0x10);
    low_arg = g_strdup_printf("--symbols=%s@0x%x", low,
                              FUZZ_IMAGE_BASE - 0x10);
    high = symbols_file("high.map", FUZZ_IMAGE_BASE + 0x1000ull);
    high_arg = g_strdup_printf("--symbols=%s@-0x1000", high);
    t = image_decode(&r, "-s", raw, "--symbols", abs, NULL);
    check_hottest(&r, &t, test_sym_of);
    t = image_decode(&r, "-s", raw, low_arg, NULL);
    check_hottest(&r, &t, test_sym_of);
    t = image_decode(&r, "-s", raw, high_arg, NULL);
    check_hottest(&r, &t, test_sym_of);
    t = image_decode(&r, "-j", "-d", "--objdump=true", raw, "--symbols", abs,
                     NULL);
    g_assert_cmpint(t.status, ==, 0);
    g_assert_nonnull(strstr(t.out, "\"addr\":\"0x8000003c\",\"priv\":3,"
                            "\"len\":2,\"sym\":\"func+0x2\""));
    /* past head's size, before the next symbol: none */
    g_assert_nonnull(strstr(t.out, "\"addr\":\"0x8000000c\",\"priv\":3,"
                            "\"len\":4,\"sym\":\"\""));
    tool_run_free(&t);
    t = image_decode(&r, "-d", "--objdump=true", raw, "--symbols", abs,
                     NULL);
    g_assert_cmpint(t.status, ==, 0);
    g_assert_nonnull(strstr(t.out, "\n000000008000003c M  <func+0x2>  "));
    g_assert_nonnull(strstr(t.out, "\n000000008000000c M  <>  "));
    tool_run_free(&t);
    /* hostile input: a MiB of random bytes */
    for (size_t i = 0; i < 1 << 20; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        bytes[i] = x >> 56;
    }
    noise = tmp_file("noise.map", bytes, 1 << 20);
    t = image_decode(&r, "-s", raw, "--symbols", noise, "--symbols", abs,
                     NULL);
    check_hottest(&r, &t, test_sym_of);
    image_run_free(&r);
}

/* With only head and mid, the image split at func into two raw files. */
static const char *split_sym_of(uint32_t off)
{
    return off < 0x0c ? "head" : off < 0x14 || off >= 0x3a ? "" : "mid";
}

/*
 * An address belongs to a symbol only inside its size, or for a symbol
 * without one, before the next symbol in the same segment: code in a
 * raw image after an ELF file's or a symbol file's last symbol is no
 * symbol's.
 */
static void test_tool_symbol_segments(void)
{
    g_autofree char *ra = NULL, *rb = NULL, *syms = NULL, *arg = NULL;
    ImageRun r;
    ToolRun t;

    if (!have_tool()) {
        return;
    }
    image_run_init(&r);
    ra = raw_image_arg("a.bin", 0, 0x3a);
    rb = raw_image_arg("b.bin", 0x3a, sizeof(fuzz_image) - 0x3a);
    syms = tmp_file("split.map", "0 000000000000000c T head\n14 t mid\n",
                    strlen("0 000000000000000c T head\n14 t mid\n"));
    arg = g_strdup_printf("--symbols=%s@0x%x", syms, FUZZ_IMAGE_BASE);
    t = image_decode(&r, "-s", ra, rb, arg, NULL);
    check_hottest(&r, &t, split_sym_of);
    image_run_free(&r);
}

/*
 * A trace that leaves the image (only its first 0x3a bytes are given):
 * gaps with the address, no error, exit status 0; decoding resumes at
 * syncs in the image and every instruction it shows is the run's.
 */
static void test_tool_gap_no_image(void)
{
    g_autofree uint64_t *got = g_new(uint64_t, MAX_ADDRS);
    g_autofree char *ra = NULL, *gap = NULL;
    size_t n, at = 0;
    ImageRun r;
    ToolRun t;

    if (!have_tool()) {
        return;
    }
    image_run_init(&r);
    ra = raw_image_arg("a.bin", 0, 0x3a);
    t = image_decode(&r, ra, NULL);
    g_assert_cmpint(t.status, ==, 0);
    g_assert_cmpstr(t.err, ==, "");
    gap = g_strdup_printf("\n# gap reason=no-image addr=0x%x ",
                          FUZZ_IMAGE_BASE + 0x3a);
    g_assert_nonnull(strstr(t.out, gap));
    n = parse_addresses(t.out, got);
    g_assert_cmpuint(n, >, 0);
    g_assert_cmpuint(n, <, r.nwalk);
    /* in the run's order (a subsequence of it), in the image */
    for (size_t i = 0; i < n; i++) {
        g_assert_cmphex(got[i], <, FUZZ_IMAGE_BASE + 0x3a);
        while (at < r.nwalk && r.walk[at] != got[i]) {
            at++;
        }
        g_assert_cmpuint(at++, <, r.nwalk);
    }
    tool_run_free(&t);
    t = image_decode(&r, "-s", ra, NULL);
    g_assert_cmpint(t.status, ==, 0);
    g_assert_nonnull(strstr(t.out, "\ngaps                 0\n"));
    g_assert_null(strstr(t.out, "\ngaps (no image)      0\n"));
    g_assert_nonnull(strstr(t.out, "\ngaps (no image)      "));
    g_assert_nonnull(strstr(t.out, "\nerrors               0\n"));
    tool_run_free(&t);
    image_run_free(&r);
}

/*
 * N-trace tells the privilege only in Ownership (trTeContext): without
 * one the summary says it is not traced, with one it counts by it.
 */
static void test_tool_ntrace_privilege(void)
{
    static const NTraceParams p = { .xlen = 64 };
    const NTraceMessage msgs[] = {
        { .tcode = NTRACE_TCODE_PROG_TRACE_SYNC, .sync = 5,
          .addr = FUZZ_IMAGE_BASE >> 1 },
        { .tcode = NTRACE_TCODE_OWNERSHIP,
          .process = 3 << 2 | NTRACE_PROCESS_FORMAT_PRIV },    /* M */
        { .tcode = NTRACE_TCODE_PROG_TRACE_CORRELATION,
          .evcode = NTRACE_EVCODE_DISABLED },
    };
    g_autofree char *raw = NULL, *with = NULL;
    g_autofree char *without = NULL;
    uint8_t all[3 * NTRACE_MAX_MESSAGE], some[3 * NTRACE_MAX_MESSAGE];
    size_t n_all = 0, n_some = 0;
    const char *args[] = { "--format=ntrace", "-s", NULL, NULL, NULL };
    ToolRun r;

    if (!have_tool()) {
        return;
    }
    for (unsigned i = 0; i < G_N_ELEMENTS(msgs); i++) {
        size_t len = ntrace_message_pack(&p, &msgs[i], all + n_all);

        if (msgs[i].tcode != NTRACE_TCODE_OWNERSHIP) {
            memcpy(some + n_some, all + n_all, len);
            n_some += len;
        }
        n_all += len;
    }
    raw = raw_image_arg("image.bin", 0, sizeof(fuzz_image));
    with = tmp_file("owner.bin", all, n_all);
    without = tmp_file("no-owner.bin", some, n_some);
    args[2] = raw;
    args[3] = without;
    r = run_tool(args, 60);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "\nprivilege            not traced"));
    tool_run_free(&r);
    args[3] = with;
    r = run_tool(args, 60);
    g_assert_cmpint(r.status, ==, 0);
    g_assert_nonnull(strstr(r.out, "\nprivilege            M 0, S 0, U 0\n"));
    tool_run_free(&r);
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
    g_test_add_func("/decoder-corpus/tool-elf-at", test_tool_elf_at);
    g_test_add_func("/decoder-corpus/tool-symbols", test_tool_symbols);
    g_test_add_func("/decoder-corpus/tool-symbol-segments",
                    test_tool_symbol_segments);
    g_test_add_func("/decoder-corpus/tool-ntrace-privilege",
                    test_tool_ntrace_privilege);
    g_test_add_func("/decoder-corpus/tool-gap-no-image",
                    test_tool_gap_no_image);
    ret = g_test_run();
    if (!ret) {
        remove_tmp_dir();   /* kept for inspection after a failure */
    }
    return ret;
}
