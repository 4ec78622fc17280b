/*
 * pdis-profile: a PDIS profile from a dumped sample buffer
 *
 *   pdis-profile [-e ELF] [--rv32] [--top N] [--hex] BUFFER
 *
 * BUFFER ('-': standard input; --hex: the bytes as hexadecimal text, as a
 * guest prints them) holds the records of a PDIS memory buffer (Smpdis/Sspdis draft,
 * docs/pdis.rst) as the hart wrote them: 64-byte records on RV64, 32 on
 * RV32 (the ELF's class decides; --rv32 without one).  Records that are
 * all zero (slots never written) are skipped, so the whole buffer can be
 * given whatever its pointer and WRAP.  Prints the hottest sampled PCs
 * with their symbols, the samples per function, the load and store
 * latency histogram with the cache and TLB outcome, and the control
 * transfers by type with their misprediction rate.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <ctype.h>
#include <errno.h>
#include "pdis_record.h"
#include "rvtrace-image.h"

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

typedef struct PCCount {
    uint64_t pc;
    unsigned long n;
} PCCount;

typedef struct Profile {
    unsigned long records, by_type[8];
    /* hot PCs: an open-addressing table */
    PCCount *pcs;
    size_t pcs_cap, pcs_used;
    /* loads and stores */
    unsigned long mem, lat_bucket[6], l1miss, llmiss, l1tlbmiss, lltlbmiss;
    /* control transfers */
    unsigned long ctrl, kind[13], mispred;
} Profile;

/* TOTAL latency buckets (cycles): the model's outcomes fall apart. */
static const unsigned lat_limit[] = { 4, 16, 32, 64, 128, 4096 };
static const char *const lat_name[] = {
    "1-3", "4-15", "16-31", "32-63", "64-127", "128+",
};

static const struct {
    uint64_t bit;
    const char *name;
} transfer_kinds[] = {
    { PDISHDR_TRET, "trap return" }, { PDISHDR_NTBR, "branch, not taken" },
    { PDISHDR_TKBR, "branch, taken" }, { PDISHDR_INDCALL, "indirect call" },
    { PDISHDR_DIRCALL, "direct call" }, { PDISHDR_INDJMP, "indirect jump" },
    { PDISHDR_DIRJMP, "direct jump" }, { PDISHDR_CORSWAP, "co-routine swap" },
    { PDISHDR_RET, "return" }, { PDISHDR_INDLJMP, "other indirect jump" },
    { PDISHDR_DIRLJMP, "other direct jump" },
};

static const char *const type_name[8] = {
    "other", "load", "store", "load and store", "control transfer",
    "reserved 5", "reserved 6", "reserved 7",
};

static PCCount *pc_slot(Profile *p, uint64_t pc)
{
    size_t i;

    if (2 * (p->pcs_used + 1) > p->pcs_cap) {
        PCCount *old = p->pcs;
        size_t cap = p->pcs_cap;

        p->pcs_cap = cap ? 2 * cap : 1024;
        p->pcs = calloc(p->pcs_cap, sizeof(*p->pcs));
        p->pcs_used = 0;
        for (size_t j = 0; j < cap; j++) {
            if (old[j].n) {
                *pc_slot(p, old[j].pc) = old[j];
                p->pcs_used++;
            }
        }
        free(old);
    }
    i = (pc * 0x9e3779b97f4a7c15ULL >> 20) & (p->pcs_cap - 1);
    while (p->pcs[i].n && p->pcs[i].pc != pc) {
        i = (i + 1) & (p->pcs_cap - 1);
    }
    return &p->pcs[i];
}

static void add_record(Profile *p, const uint64_t *rec)
{
    uint64_t hdr = rec[PDIS_REC_HDREV];
    unsigned type = hdr & PDISHDR_TYPE;
    PCCount *slot = pc_slot(p, rec[PDIS_REC_PC]);

    if (!slot->n) {
        p->pcs_used++;
        slot->pc = rec[PDIS_REC_PC];
    }
    slot->n++;
    p->records++;
    p->by_type[type]++;
    if (type >= PDIS_TYPE_LOAD && type <= PDIS_TYPE_LDST) {
        unsigned lat = rec[PDIS_REC_LAT] & PDISLAT_TOTAL, b = 0;

        while (lat >= lat_limit[b]) {
            b++;
        }
        p->mem++;
        p->lat_bucket[b]++;
        p->l1miss += !!(hdr & PDISHDR_L1MISS);
        p->llmiss += !!(hdr & PDISHDR_LLMISS);
        p->l1tlbmiss += !!(hdr & PDISHDR_L1TLBMISS);
        p->lltlbmiss += !!(hdr & PDISHDR_LLTLBMISS);
    } else if (type == PDIS_TYPE_CTRL) {
        p->ctrl++;
        for (size_t k = 0; k < ARRAY_SIZE(transfer_kinds); k++) {
            p->kind[k] += !!(hdr & transfer_kinds[k].bit);
        }
        p->mispred += !!(hdr & PDISHDR_MISPRED);
    }
}

static int by_count(const void *a, const void *b)
{
    const PCCount *x = a, *y = b;

    if (x->n != y->n) {
        return x->n < y->n ? 1 : -1;
    }
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static void print_symbol(RVImage *im, uint64_t pc)
{
    const RVSymbol *sym = im ? rv_image_symbol(im, pc, NULL, NULL) : NULL;

    if (sym) {
        printf("  %s+0x%" PRIx64, sym->name, pc - sym->addr);
    }
    printf("\n");
}

static double pct(unsigned long n, unsigned long of)
{
    return of ? 100.0 * n / of : 0.0;
}

static void print_functions(RVImage *im, PCCount *hot, size_t n,
                            unsigned long total)
{
    PCCount *fn = calloc(n + 1, sizeof(*fn));
    size_t nfn = 0;

    for (size_t i = 0; i < n; i++) {
        const RVSymbol *s = rv_image_symbol(im, hot[i].pc, NULL, NULL);
        uint64_t at = s ? s->addr : 0;
        size_t j = 0;

        while (j < nfn && fn[j].pc != at) {
            j++;
        }
        fn[j].pc = at;
        fn[j].n += hot[i].n;
        nfn += j == nfn;
    }
    qsort(fn, nfn, sizeof(*fn), by_count);
    printf("\nsamples by function:\n");
    for (size_t j = 0; j < nfn; j++) {
        const RVSymbol *s = rv_image_symbol(im, fn[j].pc, NULL, NULL);

        printf("  %8lu  %5.1f%%  %s\n", fn[j].n, pct(fn[j].n, total),
               s && fn[j].pc ? s->name : "(no symbol)");
    }
    free(fn);
}

static void print_profile(Profile *p, RVImage *im, unsigned top)
{
    PCCount *hot = calloc(p->pcs_used + 1, sizeof(*hot));
    size_t n = 0;

    for (size_t i = 0; i < p->pcs_cap; i++) {
        if (p->pcs[i].n) {
            hot[n++] = p->pcs[i];
        }
    }
    qsort(hot, n, sizeof(*hot), by_count);
    printf("%lu samples", p->records);
    for (int t = 0, first = 1; t < 8; t++) {
        if (p->by_type[t]) {
            printf("%s %lu %s", first ? ":" : ",", p->by_type[t],
                   type_name[t]);
            first = 0;
        }
    }
    printf("\n\nhottest sampled instructions:\n");
    for (size_t i = 0; i < n && i < top; i++) {
        printf("  %8lu  %5.1f%%  0x%08" PRIx64, hot[i].n,
               pct(hot[i].n, p->records), hot[i].pc);
        print_symbol(im, hot[i].pc);
    }
    if (im) {
        print_functions(im, hot, n, p->records);
    }
    if (p->mem) {
        printf("\nloads and stores: %lu; L1 miss %.1f%%, last level miss "
               "%.1f%%, L1 TLB miss %.1f%%, last-level TLB miss %.1f%%\n",
               p->mem, pct(p->l1miss, p->mem), pct(p->llmiss, p->mem),
               pct(p->l1tlbmiss, p->mem), pct(p->lltlbmiss, p->mem));
        printf("latency (TOTAL, cycles):\n");
        for (size_t b = 0; b < ARRAY_SIZE(lat_limit); b++) {
            unsigned width = p->lat_bucket[b] * 40 / p->mem;

            printf("  %7s  %8lu  ", lat_name[b], p->lat_bucket[b]);
            for (unsigned w = 0; w < width; w++) {
                putchar('#');
            }
            printf("\n");
        }
    }
    if (p->ctrl) {
        printf("\ncontrol transfers: %lu, mispredicted %.1f%%\n", p->ctrl,
               pct(p->mispred, p->ctrl));
        for (size_t k = 0; k < ARRAY_SIZE(transfer_kinds); k++) {
            if (p->kind[k]) {
                printf("  %8lu  %s\n", p->kind[k], transfer_kinds[k].name);
            }
        }
    }
    free(hot);
}

/* The whole input, as bytes (hex: pairs of hex digits, spaces ignored). */
static uint8_t *read_input(FILE *f, bool hex, size_t *len)
{
    size_t cap = 65536, n = 0;
    uint8_t *data = malloc(cap);
    int c, hi = -1;

    while ((c = getc(f)) != EOF) {
        if (hex) {
            if (isspace(c)) {
                continue;
            }
            if (!isxdigit(c)) {
                free(data);
                return NULL;
            }
            c = isdigit(c) ? c - '0' : tolower(c) - 'a' + 10;
            if (hi < 0) {
                hi = c;
                continue;
            }
            c |= hi << 4;
            hi = -1;
        }
        if (n == cap) {
            cap *= 2;
            data = realloc(data, cap);
        }
        data[n++] = c;
    }
    *len = n;
    return data;
}

static void usage(FILE *f)
{
    fprintf(f, "usage: pdis-profile [-e ELF] [--rv32] [--top N] [--hex] "
               "BUFFER\n"
               "  A profile from a dumped PDIS sample buffer "
               "(docs/pdis.rst).\n");
}

int main(int argc, char **argv)
{
    const char *elf = NULL, *path = NULL;
    bool rv32 = false, hex = false;
    unsigned top = 10, size;
    RVImage *im = NULL;
    Profile prof = { 0 };
    uint8_t zero[PDIS_RECORD_SIZE_RV64] = { 0 }, *data;
    size_t len;
    char err[256];
    FILE *f;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-e") && i + 1 < argc) {
            elf = argv[++i];
        } else if (!strcmp(argv[i], "--hex")) {
            hex = true;
        } else if (!strcmp(argv[i], "--rv32")) {
            rv32 = true;
        } else if (!strcmp(argv[i], "--top") && i + 1 < argc) {
            top = strtoul(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if ((argv[i][0] != '-' || !strcmp(argv[i], "-")) && !path) {
            path = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    if (elf) {
        im = rv_image_new();
        if (!rv_image_add_elf(im, elf, err, sizeof(err))) {
            fprintf(stderr, "pdis-profile: %s\n", err);
            return 1;
        }
        rv32 = rv_image_xlen(im) == 32;
    }
    f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
    if (!f) {
        fprintf(stderr, "pdis-profile: %s: %s\n", path, strerror(errno));
        return 1;
    }
    data = read_input(f, hex, &len);
    if (f != stdin) {
        fclose(f);
    }
    if (!data) {
        fprintf(stderr, "pdis-profile: %s: not hexadecimal\n", path);
        return 1;
    }
    size = pdis_record_size(rv32);
    for (size_t off = 0; off + size <= len; off += size) {
        uint64_t rec[PDIS_REC_FIELDS];

        if (!memcmp(data + off, zero, size)) {
            continue;
        }
        pdis_record_unpack(data + off, rv32, rec);
        add_record(&prof, rec);
    }
    free(data);
    print_profile(&prof, im, top);
    free(prof.pcs);
    if (im) {
        rv_image_free(im);
    }
    return 0;
}
