/*
 * libFuzzer harness of the decoder tool's ELF loader (tools/rvtrace-
 * image.c): an input is an ELF file; lookups then run over what it
 * loaded.  Built by scripts/fuzz-decoder.sh.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "rvtrace-image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    RVImage *im = rv_image_new();
    char err[256];
    uint64_t addr;
    uint16_t parcel;

    if (!im) {
        return 0;
    }
    if (rv_image_add_elf_data(im, "fuzz", data, size, err, sizeof(err))) {
        for (size_t i = 0; i < rv_image_symbols(im); i++) {
            const RVSymbol *s = rv_image_symbol_at(im, i);
            size_t index;
            uint64_t next, lo, hi;

            rv_image_symbol(im, s->addr + 1, &index, &next);
            rv_image_symbol_holding(im, s->addr + 1, &index, &lo, &hi);
            rv_image_find_symbol(im, s->name, &addr);
            rv_image_read_parcel(im, s->addr, &parcel);
        }
        rv_image_read_parcel(im, 0x80000000, &parcel);
    }
    rv_image_free(im);
    return 0;
}
