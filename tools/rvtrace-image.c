/*
 * Program image for the trace decoder: ELF and raw segments, symbols and
 * disassembly (see rvtrace-image.h)
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>
#include <sys/wait.h>
#include "rvtrace-image.h"

#define EM_RISCV        243
#define PT_LOAD         1
#define SHT_SYMTAB      2
#define SHT_DYNSYM      11
#define STT_NOTYPE      0
#define STT_FUNC        2
#define SHN_UNDEF       0
#define SHN_LORESERVE   0xff00

/* Largest image file read into memory (sizes come from the file). */
#define MAX_FILE_SIZE   (1ull << 30)
/* Symbol files: longest line kept (longer ones are skipped). */
#define SYMBOL_LINE     4096
/* Symbol names from text files are kept in chunks of this size. */
#define NAME_CHUNK      65536

typedef struct Segment {
    uint64_t addr;
    uint64_t size;
    uint8_t *data;
} Segment;

/* A file added, kept for objdump. */
typedef struct ImageFile {
    char *path;
    bool raw;
    uint64_t addr;          /* raw binaries: load address; ELF: bias */
    uint64_t mask;          /* the file's addresses (XLEN bits) */
} ImageFile;

/* Open addressing: instruction address -> offset in the text pool. */
typedef struct DisasmMap {
    uint64_t *keys;         /* address + 1; 0 = empty */
    uint32_t *text;
    size_t mask;
    size_t used;
    char *pool;
    size_t pool_len, pool_cap;
} DisasmMap;

struct RVImage {
    Segment *seg;
    size_t nseg;
    size_t last;            /* segment of the last lookup */
    RVSymbol *sym;
    size_t nsym, sym_cap;
    char **strtabs;         /* symbol names point into these */
    size_t nstrtabs;
    char *names;            /* room left in the last chunk of names */
    size_t names_left;
    ImageFile *files;
    size_t nfiles;
    unsigned xlen;
    DisasmMap dis;
};

static bool fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static bool fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return false;
}

RVImage *rv_image_new(void)
{
    return calloc(1, sizeof(RVImage));
}

void rv_image_free(RVImage *im)
{
    if (!im) {
        return;
    }
    for (size_t i = 0; i < im->nseg; i++) {
        free(im->seg[i].data);
    }
    for (size_t i = 0; i < im->nstrtabs; i++) {
        free(im->strtabs[i]);
    }
    for (size_t i = 0; i < im->nfiles; i++) {
        free(im->files[i].path);
    }
    free(im->seg);
    free(im->sym);
    free(im->strtabs);
    free(im->files);
    free(im->dis.keys);
    free(im->dis.text);
    free(im->dis.pool);
    free(im);
}

unsigned rv_image_xlen(const RVImage *im)
{
    return im->xlen;
}

size_t rv_image_segments(const RVImage *im)
{
    return im->nseg;
}

/* ----------------------------------------------------------- file input */

/* The whole file in a malloc'ed buffer. */
static uint8_t *read_file(const char *path, size_t *len, char *err,
                          size_t errlen)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t cap = 0, n = 0;

    if (!f) {
        fail(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    for (;;) {
        size_t got;

        if (n == cap) {
            uint8_t *bigger;

            if (cap >= MAX_FILE_SIZE) {
                fail(err, errlen, "%s: larger than 1 GiB", path);
                goto out;
            }
            cap = cap ? cap * 2 : 65536;
            bigger = realloc(buf, cap);
            if (!bigger) {
                fail(err, errlen, "%s: out of memory", path);
                goto out;
            }
            buf = bigger;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) {
            break;
        }
    }
    if (ferror(f)) {
        fail(err, errlen, "%s: read error", path);
        goto out;
    }
    fclose(f);
    *len = n;
    return buf;
out:
    fclose(f);
    free(buf);
    return NULL;
}

static bool remember_file(RVImage *im, const char *path, bool raw,
                          uint64_t addr, uint64_t mask)
{
    ImageFile *files = realloc(im->files, (im->nfiles + 1) * sizeof(*files));

    if (!files) {
        return false;
    }
    im->files = files;
    files[im->nfiles].path = strdup(path);
    files[im->nfiles].raw = raw;
    files[im->nfiles].addr = addr;
    files[im->nfiles].mask = mask;
    if (!files[im->nfiles].path) {
        return false;
    }
    im->nfiles++;
    return true;
}

/* Keep segments sorted by address; data is taken over. */
static bool add_segment(RVImage *im, uint64_t addr, uint8_t *data,
                        uint64_t size)
{
    Segment *seg = realloc(im->seg, (im->nseg + 1) * sizeof(*seg));
    size_t i;

    if (!seg) {
        return false;
    }
    im->seg = seg;
    for (i = im->nseg; i > 0 && seg[i - 1].addr > addr; i--) {
        seg[i] = seg[i - 1];
    }
    seg[i] = (Segment) { .addr = addr, .size = size, .data = data };
    im->nseg++;
    im->last = 0;
    return true;
}

static bool add_copy(RVImage *im, uint64_t addr, const uint8_t *bytes,
                     uint64_t size)
{
    uint8_t *data = malloc(size ? size : 1);

    if (!data) {
        return false;
    }
    memcpy(data, bytes, size);
    if (!add_segment(im, addr, data, size)) {
        free(data);
        return false;
    }
    return true;
}

bool rv_image_add_raw(RVImage *im, const char *path, uint64_t addr,
                      char *err, size_t errlen)
{
    size_t len;
    uint8_t *data = read_file(path, &len, err, errlen);

    if (!data) {
        return false;
    }
    if (len == 0 || addr + len < addr) {
        free(data);
        return fail(err, errlen, "%s: empty, or past the end of the "
                    "address space", path);
    }
    if (!add_segment(im, addr, data, len) ||
        !remember_file(im, path, true, addr, UINT64_MAX)) {
        free(data);
        return fail(err, errlen, "out of memory");
    }
    return true;
}

/* ------------------------------------------------------------------ ELF */

/* A view of an ELF file with bounds-checked little-endian readers. */
typedef struct Elf {
    const uint8_t *b;
    size_t len;
    bool is64;
    uint64_t mask;          /* addresses: XLEN bits */
    bool rebase;            /* move the lowest PT_LOAD segment to base */
    uint64_t base;
    uint64_t bias;          /* added to every address (modulo mask) */
} Elf;

static uint64_t rd(const Elf *e, uint64_t off, unsigned bytes)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < bytes; i++) {
        v |= (uint64_t)e->b[off + i] << (8 * i);
    }
    return v;
}

/* Is [off, off + size) inside the file? */
static bool in_file(const Elf *e, uint64_t off, uint64_t size)
{
    return off <= e->len && size <= e->len - off;
}

/* A word of the file's class: 4 bytes in ELF32, 8 in ELF64. */
static uint64_t rdw(const Elf *e, uint64_t off)
{
    return rd(e, off, e->is64 ? 8 : 4);
}

static bool elf_check_header(const Elf *e, const char *path, char *err,
                             size_t errlen)
{
    if (e->len < 52 || memcmp(e->b, "\x7f" "ELF", 4)) {
        return fail(err, errlen, "%s: not an ELF file", path);
    }
    if (e->b[4] != 1 && e->b[4] != 2) {
        return fail(err, errlen, "%s: unknown ELF class %u", path, e->b[4]);
    }
    if (e->b[5] != 1) {
        return fail(err, errlen, "%s: not a little-endian ELF file", path);
    }
    if (e->is64 && e->len < 64) {
        return fail(err, errlen, "%s: truncated ELF header", path);
    }
    if (rd(e, 18, 2) != EM_RISCV) {
        return fail(err, errlen, "%s: not a RISC-V ELF file (machine %u)",
                    path, (unsigned)rd(e, 18, 2));
    }
    return true;
}

/*
 * e->bias: what moves the lowest PT_LOAD segment to e->base (0 without
 * rebase).  The program headers are in the file.
 */
static void elf_bias(Elf *e, uint64_t phoff, unsigned phentsize,
                     unsigned phnum)
{
    uint64_t lowest = UINT64_MAX;

    e->bias = 0;
    if (!e->rebase) {
        return;
    }
    for (unsigned i = 0; i < phnum; i++) {
        uint64_t ph = phoff + (uint64_t)i * phentsize;
        uint64_t vaddr = rdw(e, ph + (e->is64 ? 16 : 8));

        if (rd(e, ph, 4) == PT_LOAD && vaddr < lowest) {
            lowest = vaddr;
        }
    }
    if (lowest != UINT64_MAX) {
        e->bias = (e->base - lowest) & e->mask;
    }
}

static bool elf_load_segments(RVImage *im, Elf *e, const char *path,
                              char *err, size_t errlen)
{
    uint64_t phoff = rdw(e, e->is64 ? 32 : 28);
    unsigned phentsize = rd(e, e->is64 ? 54 : 42, 2);
    unsigned phnum = rd(e, e->is64 ? 56 : 44, 2);
    unsigned need = e->is64 ? 56 : 32;
    uint64_t mask = e->mask;
    unsigned loaded = 0;

    if (phnum && (phentsize < need ||
                  !in_file(e, phoff, (uint64_t)phentsize * phnum))) {
        return fail(err, errlen, "%s: program headers outside the file",
                    path);
    }
    elf_bias(e, phoff, phentsize, phnum);
    for (unsigned i = 0; i < phnum; i++) {
        uint64_t ph = phoff + (uint64_t)i * phentsize;
        uint64_t off, vaddr, filesz;

        if (rd(e, ph, 4) != PT_LOAD) {
            continue;
        }
        off = rdw(e, ph + (e->is64 ? 8 : 4));
        vaddr = (rdw(e, ph + (e->is64 ? 16 : 8)) + e->bias) & mask;
        filesz = rdw(e, ph + (e->is64 ? 32 : 16));
        if (!filesz) {
            continue;
        }
        if (!in_file(e, off, filesz) || vaddr + filesz - 1 > mask ||
            vaddr + filesz < vaddr) {
            return fail(err, errlen, "%s: segment %u outside the file or "
                        "the address space", path, i);
        }
        if (!add_copy(im, vaddr, e->b + off, filesz)) {
            return fail(err, errlen, "out of memory");
        }
        loaded++;
    }
    if (!loaded) {
        return fail(err, errlen, "%s: no loadable segment", path);
    }
    return true;
}

static int symbol_order(const void *a, const void *b)
{
    const RVSymbol *x = a, *y = b;

    if (x->addr != y->addr) {
        return x->addr < y->addr ? -1 : 1;
    }
    /*
     * At one address: the largest (a function rather than a label of
     * size 0) first, then by name; the first is the one shown.
     */
    if (x->size != y->size) {
        return x->size > y->size ? -1 : 1;
    }
    return strcmp(x->name, y->name);
}

static void sort_symbols(RVImage *im)
{
    if (im->nsym) {
        qsort(im->sym, im->nsym, sizeof(*im->sym), symbol_order);
    }
}

/* Room for n more symbols. */
static bool reserve_symbols(RVImage *im, uint64_t n)
{
    size_t cap = im->sym_cap;
    RVSymbol *sym;

    if (n <= cap - im->nsym) {
        return true;
    }
    if (n > SIZE_MAX / sizeof(*sym) / 2 - im->nsym) {
        return false;
    }
    cap = im->nsym + n > cap * 2 ? im->nsym + n : cap * 2;
    sym = realloc(im->sym, cap * sizeof(*sym));
    if (!sym) {
        return false;
    }
    im->sym = sym;
    im->sym_cap = cap;
    return true;
}

/* Names worth showing: not empty, not assembler-local or mapping. */
static bool useful_name(const char *name)
{
    return name[0] && name[0] != '$' && strncmp(name, ".L", 2);
}

static bool elf_add_symbols(RVImage *im, const Elf *e, uint64_t symoff,
                            uint64_t symsize, uint64_t entsize,
                            uint64_t stroff, uint64_t strsize)
{
    uint64_t n = symsize / entsize;
    char *strtab, **tabs;
    RVSymbol *sym;

    strtab = malloc(strsize + 1);
    tabs = realloc(im->strtabs, (im->nstrtabs + 1) * sizeof(*tabs));
    if (!strtab || !tabs) {
        free(strtab);
        return false;
    }
    im->strtabs = tabs;
    memcpy(strtab, e->b + stroff, strsize);
    strtab[strsize] = '\0';     /* a name running off the end stops here */
    tabs[im->nstrtabs++] = strtab;
    if (!reserve_symbols(im, n)) {
        return false;
    }
    sym = im->sym;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t s = symoff + i * entsize;
        uint64_t name = rd(e, s, 4);
        unsigned info = e->b[s + (e->is64 ? 4 : 12)];
        unsigned shndx = rd(e, s + (e->is64 ? 6 : 14), 2);
        uint64_t value = rdw(e, s + (e->is64 ? 8 : 4));
        uint64_t size = rdw(e, s + (e->is64 ? 16 : 8));

        if ((info & 0xf) != STT_FUNC && (info & 0xf) != STT_NOTYPE) {
            continue;
        }
        if (shndx == SHN_UNDEF || shndx >= SHN_LORESERVE || name >= strsize ||
            !useful_name(strtab + name)) {
            continue;
        }
        sym[im->nsym++] = (RVSymbol) {
            .addr = (value + e->bias) & e->mask, .size = size,
            .name = strtab + name,
        };
    }
    return true;
}

/* Symbols of the first symbol table (.symtab, else .dynsym). */
static bool elf_load_symbols(RVImage *im, const Elf *e, const char *path,
                             char *err, size_t errlen)
{
    uint64_t shoff = rdw(e, e->is64 ? 40 : 32);
    unsigned shentsize = rd(e, e->is64 ? 58 : 46, 2);
    unsigned shnum = rd(e, e->is64 ? 60 : 48, 2);
    unsigned need = e->is64 ? 64 : 40, entsize = e->is64 ? 24 : 16;

    if (!shnum) {
        return true;    /* stripped: addresses only */
    }
    if (shentsize < need || !in_file(e, shoff, (uint64_t)shentsize * shnum)) {
        return fail(err, errlen, "%s: section headers outside the file",
                    path);
    }
    for (unsigned want = SHT_SYMTAB;; want = SHT_DYNSYM) {
        for (unsigned i = 0; i < shnum; i++) {
            uint64_t sh = shoff + (uint64_t)i * shentsize, str;
            uint64_t off, size, stroff, strsize;
            unsigned link;

            if (rd(e, sh + 4, 4) != want) {
                continue;
            }
            off = rdw(e, sh + (e->is64 ? 24 : 16));
            size = rdw(e, sh + (e->is64 ? 32 : 20));
            link = rd(e, sh + (e->is64 ? 40 : 24), 4);
            if (link >= shnum || !in_file(e, off, size)) {
                return fail(err, errlen, "%s: bad symbol table", path);
            }
            str = shoff + (uint64_t)link * shentsize;
            stroff = rdw(e, str + (e->is64 ? 24 : 16));
            strsize = rdw(e, str + (e->is64 ? 32 : 20));
            if (!in_file(e, stroff, strsize)) {
                return fail(err, errlen, "%s: bad string table", path);
            }
            if (!elf_add_symbols(im, e, off, size, entsize, stroff,
                                 strsize)) {
                return fail(err, errlen, "out of memory");
            }
            sort_symbols(im);
            return true;
        }
        if (want == SHT_DYNSYM) {
            return true;
        }
    }
}

/* An ELF file from its bytes, moved to base if rebase; *bias: by what. */
static bool add_elf(RVImage *im, const char *name, const uint8_t *data,
                    size_t len, bool rebase, uint64_t base, uint64_t *bias,
                    char *err, size_t errlen)
{
    Elf e = {
        .b = data, .len = len, .is64 = len > 4 && data[4] == 2,
        .rebase = rebase, .base = base,
    };

    e.mask = e.is64 ? UINT64_MAX : UINT32_MAX;
    if (!elf_check_header(&e, name, err, errlen) ||
        !elf_load_segments(im, &e, name, err, errlen) ||
        !elf_load_symbols(im, &e, name, err, errlen)) {
        return false;
    }
    if (!im->xlen) {
        im->xlen = e.is64 ? 64 : 32;
    }
    *bias = e.bias;
    return true;
}

bool rv_image_add_elf_data(RVImage *im, const char *name,
                           const uint8_t *data, size_t len, char *err,
                           size_t errlen)
{
    uint64_t bias;

    return add_elf(im, name, data, len, false, 0, &bias, err, errlen);
}

static bool add_elf_file(RVImage *im, const char *path, bool rebase,
                         uint64_t base, char *err, size_t errlen)
{
    size_t len;
    uint8_t *buf = read_file(path, &len, err, errlen);
    uint64_t bias;
    bool ok;

    if (!buf) {
        return false;
    }
    ok = add_elf(im, path, buf, len, rebase, base, &bias, err, errlen);
    if (ok && !remember_file(im, path, false, bias,
                             buf[4] == 2 ? UINT64_MAX : UINT32_MAX)) {
        ok = fail(err, errlen, "out of memory");
    }
    free(buf);
    return ok;
}

bool rv_image_add_elf(RVImage *im, const char *path, char *err,
                      size_t errlen)
{
    return add_elf_file(im, path, false, 0, err, errlen);
}

bool rv_image_add_elf_at(RVImage *im, const char *path, uint64_t base,
                         char *err, size_t errlen)
{
    return add_elf_file(im, path, true, base, err, errlen);
}

/* --------------------------------------------------------- symbol files */

/* A copy of the n bytes at s, NUL-terminated, kept with the image. */
static const char *keep_name(RVImage *im, const char *s, size_t n)
{
    char *p;

    if (n + 1 > im->names_left) {
        size_t size = n + 1 > NAME_CHUNK ? n + 1 : NAME_CHUNK;
        char **tabs = realloc(im->strtabs,
                              (im->nstrtabs + 1) * sizeof(*tabs));

        if (!tabs) {
            return NULL;
        }
        im->strtabs = tabs;
        p = malloc(size);
        if (!p) {
            return NULL;
        }
        tabs[im->nstrtabs++] = p;
        im->names = p;
        im->names_left = size;
    }
    p = im->names;
    memcpy(p, s, n);
    p[n] = '\0';
    im->names += n + 1;
    im->names_left -= n + 1;
    return p;
}

/* A hex number of 1 to 16 digits, with or without 0x: the whole of s. */
static bool parse_hex(const char *s, uint64_t *v)
{
    size_t n;

    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        s += 2;
    }
    n = strlen(s);
    if (!n || n > 16 || strspn(s, "0123456789abcdefABCDEF") != n) {
        return false;
    }
    for (*v = 0; *s; s++) {
        *v = *v << 4 | (*s <= '9' ? *s - '0' : (*s | 0x20) - 'a' + 10);
    }
    return true;
}

/* "[module]" of /proc/kallsyms */
static bool module_field(const char *s)
{
    size_t n = strlen(s);

    return n >= 2 && s[0] == '[' && s[n - 1] == ']';
}

/*
 * One line of nm, System.map or /proc/kallsyms, split at blanks: ADDR
 * TYPE NAME or ADDR SIZE TYPE NAME, and an optional [module].  Returns
 * false if it is neither.
 */
static bool symbol_line(char **f, unsigned n, RVSymbol *sym, char *type)
{
    unsigned at;

    if (n < 3 || !parse_hex(f[0], &sym->addr)) {
        return false;
    }
    sym->size = 0;
    if (strlen(f[1]) == 1 && (n == 3 || (n == 4 && module_field(f[3])))) {
        at = 1;
    } else if (n >= 4 && parse_hex(f[1], &sym->size) && strlen(f[2]) == 1 &&
               (n == 4 || (n == 5 && module_field(f[4])))) {
        at = 2;
    } else {
        return false;
    }
    *type = f[at][0];
    sym->name = f[at + 1];
    return true;
}

/*
 * The next line of f in line (at most SYMBOL_LINE - 1 bytes); *n gets its
 * length.  Returns 0 at the end of the file, 1 for a line, -1 for a line
 * that was too long or held a NUL byte (skipped).
 */
static int read_line(FILE *f, char *line, size_t *n)
{
    bool bad = false;
    int c;

    *n = 0;
    while ((c = getc(f)) != EOF && c != '\n') {
        if (c == '\0' || *n == SYMBOL_LINE - 1) {
            bad = true;
        } else {
            line[(*n)++] = c;
        }
    }
    line[*n] = '\0';
    if (c == EOF && !*n && !bad) {
        return 0;
    }
    return bad ? -1 : 1;
}

bool rv_image_add_symbols(RVImage *im, const char *path, uint64_t bias,
                          size_t *added, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    size_t before = im->nsym, n;
    bool ok = true;
    char *line;
    int got;

    *added = 0;
    if (!f) {
        return fail(err, errlen, "%s: %s", path, strerror(errno));
    }
    line = malloc(SYMBOL_LINE);
    if (!line) {
        fclose(f);
        return fail(err, errlen, "%s: out of memory", path);
    }
    while (ok && (got = read_line(f, line, &n)) != 0) {
        char *fields[6], *save = NULL, *tok;
        unsigned nf = 0;
        RVSymbol sym;
        char type;

        if (got < 0) {
            continue;
        }
        for (tok = strtok_r(line, " \t\r\v\f", &save); tok && nf < 6;
             tok = strtok_r(NULL, " \t\r\v\f", &save)) {
            fields[nf++] = tok;
        }
        if (!symbol_line(fields, nf, &sym, &type) || !strchr("tTwW", type) ||
            !useful_name(sym.name)) {
            continue;
        }
        sym.addr += bias;
        sym.name = keep_name(im, sym.name, strlen(sym.name));
        ok = sym.name && reserve_symbols(im, 1);
        if (ok) {
            im->sym[im->nsym++] = sym;
        }
    }
    if (ok && ferror(f)) {
        fail(err, errlen, "%s: read error", path);
    } else if (!ok) {
        fail(err, errlen, "%s: out of memory", path);
    }
    ok &= !ferror(f);
    fclose(f);
    free(line);
    *added = im->nsym - before;
    sort_symbols(im);
    return ok;
}

/* ----------------------------------------------------------- lookups */

static bool in_segment(const Segment *s, uint64_t addr)
{
    return addr >= s->addr && addr - s->addr < s->size;
}

/* The segment holding addr, or NULL; remembered for the next lookup. */
static const Segment *find_segment(RVImage *im, uint64_t addr)
{
    size_t lo = 0, hi = im->nseg;

    if (im->nseg && in_segment(&im->seg[im->last], addr)) {
        return &im->seg[im->last];
    }
    /* the last segment starting at or before addr */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (im->seg[mid].addr <= addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (!lo || !in_segment(&im->seg[lo - 1], addr)) {
        return NULL;
    }
    im->last = lo - 1;
    return &im->seg[lo - 1];
}

const uint8_t *rv_image_segment(RVImage *im, uint64_t addr, uint64_t *base,
                                uint64_t *size)
{
    const Segment *s = find_segment(im, addr);

    if (!s) {
        return NULL;
    }
    *base = s->addr;
    *size = s->size;
    return s->data;
}

bool rv_image_read_parcel(RVImage *im, uint64_t addr, uint16_t *parcel)
{
    const Segment *s = find_segment(im, addr);

    if (!s || addr - s->addr + 1 >= s->size) {
        return false;       /* the second byte is not in the segment */
    }
    *parcel = s->data[addr - s->addr] | s->data[addr - s->addr + 1] << 8;
    return true;
}

size_t rv_image_symbols(const RVImage *im)
{
    return im->nsym;
}

const RVSymbol *rv_image_symbol_at(const RVImage *im, size_t index)
{
    return index < im->nsym ? &im->sym[index] : NULL;
}

/* The number of symbols at or before addr. */
static size_t symbols_upto(const RVImage *im, uint64_t addr)
{
    size_t lo = 0, hi = im->nsym;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (im->sym[mid].addr <= addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* The first symbol of [from, to] for which size0 is size == 0, or to. */
static size_t first_of(const RVImage *im, size_t from, size_t to,
                       bool size0)
{
    uint64_t addr = im->sym[to].addr;

    while (from < to) {
        size_t mid = from + (to - from) / 2;

        if (size0 ? im->sym[mid].size != 0 : im->sym[mid].addr < addr) {
            from = mid + 1;
        } else {
            to = mid;
        }
    }
    return from;
}

const RVSymbol *rv_image_symbol(const RVImage *im, uint64_t addr,
                                size_t *index, uint64_t *next)
{
    size_t lo = symbols_upto(im, addr), i;

    if (!lo) {
        return NULL;
    }
    /* the first of the symbols at that address is the preferred one */
    i = first_of(im, 0, lo - 1, false);
    if (index) {
        *index = i;
    }
    if (next) {
        *next = lo < im->nsym ? im->sym[lo].addr : UINT64_MAX;
    }
    return &im->sym[i];
}

const RVSymbol *rv_image_symbol_holding(RVImage *im, uint64_t addr,
                                        size_t *index, uint64_t *lo,
                                        uint64_t *hi)
{
    const Segment *seg = find_segment(im, addr);
    size_t n = symbols_upto(im, addr), first, last;
    const RVSymbol *s;
    uint64_t from, to;

    *index = im->nsym;
    if (!seg) {
        *lo = *hi = addr;
        return NULL;
    }
    /* the answer changes at most at the segment's ends and at symbols */
    from = seg->addr;
    to = seg->addr + seg->size;
    if (n < im->nsym && im->sym[n].addr < to) {
        to = im->sym[n].addr;
    }
    *lo = from;
    *hi = to;
    if (!n) {
        return NULL;
    }
    last = n - 1;
    first = first_of(im, 0, last, false);
    s = &im->sym[first];
    if (s->addr > from) {
        *lo = from = s->addr;
    }
    if (s->size) {
        /* the largest of the symbols at that address */
        if (addr - s->addr < s->size) {
            if (s->size < to - s->addr) {
                *hi = s->addr + s->size;
            }
            *index = first;
            return s;
        }
        if (s->addr + s->size > from) {
            *lo = s->addr + s->size;
        }
        if (im->sym[last].size) {
            return NULL;
        }
        first = first_of(im, first, last, true);
        s = &im->sym[first];
    }
    if (s->addr < seg->addr) {
        return NULL;        /* a label of another segment */
    }
    *index = first;
    return s;
}

bool rv_image_find_symbol(const RVImage *im, const char *name,
                          uint64_t *addr)
{
    for (size_t i = 0; i < im->nsym; i++) {
        if (!strcmp(im->sym[i].name, name)) {
            *addr = im->sym[i].addr;
            return true;
        }
    }
    return false;
}

/* --------------------------------------------------------- disassembly */

static size_t dis_hash(uint64_t addr)
{
    return (size_t)((addr >> 1) * UINT64_C(0x9e3779b97f4a7c15) >> 20);
}

static bool dis_grow(DisasmMap *m)
{
    size_t cap = m->keys ? (m->mask + 1) * 2 : 4096;
    uint64_t *keys = calloc(cap, sizeof(*keys));
    uint32_t *text = calloc(cap, sizeof(*text));

    if (!keys || !text) {
        free(keys);
        free(text);
        return false;
    }
    for (size_t i = 0; m->keys && i <= m->mask; i++) {
        size_t j = dis_hash(m->keys[i] - 1) & (cap - 1);

        if (!m->keys[i]) {
            continue;
        }
        while (keys[j]) {
            j = (j + 1) & (cap - 1);
        }
        keys[j] = m->keys[i];
        text[j] = m->text[i];
    }
    free(m->keys);
    free(m->text);
    m->keys = keys;
    m->text = text;
    m->mask = cap - 1;
    return true;
}

static bool dis_add(DisasmMap *m, uint64_t addr, const char *s, size_t n)
{
    size_t j;

    if ((!m->keys || (m->used + 1) * 2 > m->mask + 1) && !dis_grow(m)) {
        return false;
    }
    if (m->pool_len + n + 1 > m->pool_cap || m->pool_len + n + 1 >
        UINT32_MAX) {
        size_t cap = m->pool_cap ? m->pool_cap * 2 : 65536;
        char *pool;

        if (cap > UINT32_MAX || cap < m->pool_len + n + 1) {
            return false;
        }
        pool = realloc(m->pool, cap);
        if (!pool) {
            return false;
        }
        m->pool = pool;
        m->pool_cap = cap;
    }
    for (j = dis_hash(addr) & m->mask; m->keys[j]; j = (j + 1) & m->mask) {
        if (m->keys[j] == addr + 1) {
            return true;    /* keep the first text for an address */
        }
    }
    m->keys[j] = addr + 1;
    m->text[j] = m->pool_len;
    memcpy(m->pool + m->pool_len, s, n);
    m->pool[m->pool_len + n] = '\0';
    m->pool_len += n + 1;
    m->used++;
    return true;
}

const char *rv_image_disasm(const RVImage *im, uint64_t addr)
{
    const DisasmMap *m = &im->dis;

    if (!m->keys) {
        return NULL;
    }
    for (size_t j = dis_hash(addr) & m->mask; m->keys[j];
         j = (j + 1) & m->mask) {
        if (m->keys[j] == addr + 1) {
            return m->pool + m->text[j];
        }
    }
    return NULL;
}

/*
 * One line of objdump -d --no-show-raw-insn: "  80000000:\tcsrr\tt0,..."
 * The text after the address, tabs turned into spaces.
 */
static void dis_line(DisasmMap *m, char *line, uint64_t mask)
{
    char *p = line, *start;
    uint64_t addr = 0;
    size_t n;

    while (*p == ' ') {
        p++;
    }
    for (start = p; p - start < 16 && isxdigit((unsigned char)*p); p++) {
        addr = addr << 4 | (*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10);
    }
    if (p == start || p[0] != ':' || p[1] != '\t') {
        return;
    }
    p += 2;
    n = strcspn(p, "\n");
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\t') {
            p[i] = ' ';
        }
    }
    if (n) {
        dis_add(m, addr & mask, p, n);
    }
}

static bool run_objdump(RVImage *im, const char *objdump,
                        const ImageFile *f)
{
    char vma[32], mach[32];
    const char *argv[12];
    int fd[2], status;
    unsigned n = 0;
    pid_t pid;
    FILE *out;
    char line[512];

    argv[n++] = objdump;
    argv[n++] = "--no-show-raw-insn";
    if (f->raw) {
        snprintf(vma, sizeof(vma), "--adjust-vma=0x%" PRIx64, f->addr);
        snprintf(mach, sizeof(mach), "riscv:rv%u", im->xlen ? im->xlen : 64);
        argv[n++] = "-D";
        argv[n++] = "-b";
        argv[n++] = "binary";
        argv[n++] = "-m";
        argv[n++] = mach;
        argv[n++] = vma;
    } else {
        argv[n++] = "-d";
        if (f->addr) {
            snprintf(vma, sizeof(vma), "--adjust-vma=0x%" PRIx64, f->addr);
            argv[n++] = vma;
        }
    }
    argv[n++] = f->path;
    argv[n] = NULL;
    if (pipe(fd)) {
        return false;
    }
    pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return false;
    }
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        execvp(objdump, (char *const *)argv);
        _exit(127);
    }
    close(fd[1]);
    out = fdopen(fd[0], "r");
    if (!out) {
        close(fd[0]);
        waitpid(pid, &status, 0);
        return false;
    }
    while (fgets(line, sizeof(line), out)) {
        dis_line(&im->dis, line, f->mask);
    }
    fclose(out);
    return waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

bool rv_image_load_disasm(RVImage *im, const char *objdump)
{
    bool ok = true;

    for (size_t i = 0; i < im->nfiles; i++) {
        ok &= run_objdump(im, objdump, &im->files[i]);
    }
    return ok;
}
