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

typedef struct Segment {
    uint64_t addr;
    uint64_t size;
    uint8_t *data;
} Segment;

/* A file added, kept for objdump. */
typedef struct ImageFile {
    char *path;
    bool raw;
    uint64_t addr;          /* raw binaries: load address */
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
    size_t nsym;
    char **strtabs;         /* symbol names point into these */
    size_t nstrtabs;
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
                          uint64_t addr)
{
    ImageFile *files = realloc(im->files, (im->nfiles + 1) * sizeof(*files));

    if (!files) {
        return false;
    }
    im->files = files;
    files[im->nfiles].path = strdup(path);
    files[im->nfiles].raw = raw;
    files[im->nfiles].addr = addr;
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
        !remember_file(im, path, true, addr)) {
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

static bool elf_load_segments(RVImage *im, const Elf *e, const char *path,
                              char *err, size_t errlen)
{
    uint64_t phoff = rdw(e, e->is64 ? 32 : 28);
    unsigned phentsize = rd(e, e->is64 ? 54 : 42, 2);
    unsigned phnum = rd(e, e->is64 ? 56 : 44, 2);
    unsigned need = e->is64 ? 56 : 32;
    uint64_t mask = e->is64 ? UINT64_MAX : UINT32_MAX;
    unsigned loaded = 0;

    if (phnum && (phentsize < need ||
                  !in_file(e, phoff, (uint64_t)phentsize * phnum))) {
        return fail(err, errlen, "%s: program headers outside the file",
                    path);
    }
    for (unsigned i = 0; i < phnum; i++) {
        uint64_t ph = phoff + (uint64_t)i * phentsize;
        uint64_t off, vaddr, filesz;

        if (rd(e, ph, 4) != PT_LOAD) {
            continue;
        }
        off = rdw(e, ph + (e->is64 ? 8 : 4));
        vaddr = rdw(e, ph + (e->is64 ? 16 : 8));
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
    /* at one address: the sized (function) symbol first */
    return (x->size == 0) - (y->size == 0);
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
    sym = realloc(im->sym, (im->nsym + n) * sizeof(*sym));
    if (!sym && n) {
        return false;
    }
    im->sym = sym;
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
            .addr = value, .size = size, .name = strtab + name,
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
            qsort(im->sym, im->nsym, sizeof(*im->sym), symbol_order);
            return true;
        }
        if (want == SHT_DYNSYM) {
            return true;
        }
    }
}

bool rv_image_add_elf_data(RVImage *im, const char *name,
                           const uint8_t *data, size_t len, char *err,
                           size_t errlen)
{
    Elf e = { .b = data, .len = len, .is64 = len > 4 && data[4] == 2 };

    if (!elf_check_header(&e, name, err, errlen) ||
        !elf_load_segments(im, &e, name, err, errlen) ||
        !elf_load_symbols(im, &e, name, err, errlen)) {
        return false;
    }
    if (!im->xlen) {
        im->xlen = e.is64 ? 64 : 32;
    }
    return true;
}

bool rv_image_add_elf(RVImage *im, const char *path, char *err,
                      size_t errlen)
{
    size_t len;
    uint8_t *buf = read_file(path, &len, err, errlen);
    bool ok;

    if (!buf) {
        return false;
    }
    ok = rv_image_add_elf_data(im, path, buf, len, err, errlen);
    if (ok && !remember_file(im, path, false, 0)) {
        ok = fail(err, errlen, "out of memory");
    }
    free(buf);
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

const RVSymbol *rv_image_symbol(const RVImage *im, uint64_t addr,
                                size_t *index, uint64_t *next)
{
    size_t lo = 0, hi = im->nsym, i;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;

        if (im->sym[mid].addr <= addr) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if (!lo) {
        return NULL;
    }
    /* the first of the symbols at that address is the preferred one */
    i = lo - 1;
    while (i > 0 && im->sym[i - 1].addr == im->sym[i].addr) {
        i--;
    }
    if (index) {
        *index = i;
    }
    if (next) {
        *next = lo < im->nsym ? im->sym[lo].addr : UINT64_MAX;
    }
    return &im->sym[i];
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
static void dis_line(DisasmMap *m, char *line)
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
        dis_add(m, addr, p, n);
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
        dis_line(&im->dis, line);
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
