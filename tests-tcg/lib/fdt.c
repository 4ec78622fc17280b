/*
 * rvtest: read properties of the flattened device tree (devicetree
 * specification v0.4, chapter 5) that QEMU passes at reset.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

#define FDT_MAGIC       0xd00dfeed
#define FDT_BEGIN_NODE  1
#define FDT_END_NODE    2
#define FDT_PROP        3
#define FDT_NOP         4
#define FDT_END         9

const void *rv_boot_fdt;

static uint32_t be32(const void *p)
{
    const uint8_t *b = p;

    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | b[2] << 8 | b[3];
}

static const uint8_t *align4(const uint8_t *p, const uint8_t *base)
{
    return base + ((p - base + 3) & ~3);
}

static bool str_eq(const char *a, const char *b)
{
    while (*a && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

/* Does path component [c, c+n) equal name? */
static bool component_is(const char *c, size_t n, const char *name)
{
    return strlen(name) == n && memcmp(c, name, n) == 0;
}

const void *rv_fdt_prop(const char *path, const char *prop, unsigned *len)
{
    const uint8_t *fdt = rv_boot_fdt, *p, *strings;
    /* the part of path not matched yet ("/" is the root itself) */
    const char *want = str_eq(path, "/") ? "" : path;
    int depth = 0, matched = 0; /* nodes entered, of which on the path */

    if (!fdt || be32(fdt) != FDT_MAGIC) {
        return NULL;
    }
    p = fdt + be32(fdt + 8);
    strings = fdt + be32(fdt + 12);
    for (;;) {
        uint32_t token = be32(p);

        p += 4;
        switch (token) {
        case FDT_BEGIN_NODE: {
            const char *name = (const char *)p;
            const char *c = want + (*want == '/');
            size_t n = 0;

            while (c[n] && c[n] != '/') {
                n++;
            }
            /* the root node has an empty name */
            if (depth == matched && (depth == 0 || component_is(c, n, name))) {
                matched++;
                if (depth > 0) {
                    want = c + n;
                }
            }
            depth++;
            p = align4(p + strlen(name) + 1, fdt);
            break;
        }
        case FDT_END_NODE:
            if (depth == matched) {
                return NULL;    /* left the node of path */
            }
            depth--;
            break;
        case FDT_PROP: {
            uint32_t size = be32(p), nameoff = be32(p + 4);

            if (depth == matched && *want == '\0' &&
                str_eq((const char *)strings + nameoff, prop)) {
                *len = size;
                return p + 8;
            }
            p = align4(p + 8 + size, fdt);
            break;
        }
        case FDT_NOP:
            break;
        default:
            return NULL;
        }
    }
}

/* ---------------------------------------------------------- riscv,isa */

bool rv_isa_has(const char *name)
{
    unsigned len;
    const char *isa = rv_fdt_prop("/cpus/cpu@0", "riscv,isa", &len);
    size_t n = strlen(name);

    for (const char *p = isa; p && *p; p++) {
        if ((p == isa || p[-1] == '_') && !memcmp(p, name, n) &&
            (p[n] == '_' || p[n] == '\0')) {
            return true;
        }
    }
    return false;
}

/* ------------------------------------------------------- command line */

const char *rv_arg(const char *key)
{
    static const char *cmdline;
    size_t n = strlen(key);
    unsigned len;

    if (!cmdline) {
        cmdline = rv_fdt_prop("/chosen", "bootargs", &len);
    }
    for (const char *p = cmdline; p && *p; p++) {
        if ((p == cmdline || p[-1] == ' ') && !memcmp(p, key, n)) {
            return p + n;
        }
    }
    return NULL;
}

bool rv_arg_is(const char *key, const char *val)
{
    const char *p = rv_arg(key);
    size_t n = strlen(val);

    return p && !memcmp(p, val, n) && (p[n] == ' ' || p[n] == '\0');
}

unsigned long rv_arg_value(const char *key, unsigned long dflt)
{
    const char *p = rv_arg(key);
    unsigned long v = 0;

    if (!p) {
        return dflt;
    }
    for (; *p >= '0' && *p <= '9'; p++) {
        v = v * 10 + (*p - '0');
    }
    return v;
}
