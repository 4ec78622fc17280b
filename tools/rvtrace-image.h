/*
 * Program image for the trace decoder: the code a trace walks through
 *
 * Loadable segments of RISC-V ELF files (ELF32 and ELF64, little endian,
 * parsed here without libelf; optionally moved, for position-independent
 * code linked at one address and run at another) and raw binaries at a
 * given address, the symbols of ELF symbol tables and of text files in
 * the format of nm, System.map and /proc/kallsyms for symbol+offset, and
 * optionally the disassembly of every instruction (from objdump, read
 * once).  Every length and offset taken from a file is checked: a broken
 * or hostile file is an error or skipped, never a crash.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RVTRACE_IMAGE_H
#define RVTRACE_IMAGE_H

typedef struct RVImage RVImage;

typedef struct RVSymbol {
    uint64_t addr;
    uint64_t size;          /* 0: up to the next symbol */
    const char *name;
} RVSymbol;

RVImage *rv_image_new(void);
void rv_image_free(RVImage *im);

/*
 * Add the PT_LOAD segments and the symbols of an ELF file.  Returns false
 * with a message in err (errlen bytes) if the file cannot be used.
 */
bool rv_image_add_elf(RVImage *im, const char *path, char *err,
                      size_t errlen);
/*
 * The same, moved so that the lowest PT_LOAD segment starts at base: every
 * segment and symbol moves by the same bias (modulo the ELF's XLEN).
 */
bool rv_image_add_elf_at(RVImage *im, const char *path, uint64_t base,
                         char *err, size_t errlen);
/* The same from the file's bytes (name is for messages). */
bool rv_image_add_elf_data(RVImage *im, const char *name,
                           const uint8_t *data, size_t len, char *err,
                           size_t errlen);
/* Add a raw binary whose first byte is at addr. */
bool rv_image_add_raw(RVImage *im, const char *path, uint64_t addr,
                      char *err, size_t errlen);
/*
 * Add the text symbols (types t, T, w, W) of a text file in the format
 * of nm, System.map and /proc/kallsyms: "ADDR TYPE NAME" per line (nm -S
 * "ADDR SIZE TYPE NAME" too), ADDR and SIZE in hex, an optional trailing
 * "[module]".  bias is added to every address (modulo 2^64).  Lines that
 * do not parse (or longer than 4 KiB) are skipped.  *added gets the
 * number of symbols added.  Returns false if the file cannot be read.
 */
bool rv_image_add_symbols(RVImage *im, const char *path, uint64_t bias,
                          size_t *added, char *err, size_t errlen);

/* XLEN of the first ELF file added (32 or 64), or 0 without one. */
unsigned rv_image_xlen(const RVImage *im);
/* Number of segments and bytes of code and data loaded. */
size_t rv_image_segments(const RVImage *im);

/*
 * The 16-bit parcel at addr (little endian); false if addr or addr + 1
 * is not in the image.  Fast for repeated nearby addresses.
 */
bool rv_image_read_parcel(RVImage *im, uint64_t addr, uint16_t *parcel);

/*
 * The bytes of the segment holding addr (NULL if none): they start at
 * address *base and are *size bytes long.  For fast sequential reads.
 */
const uint8_t *rv_image_segment(RVImage *im, uint64_t addr, uint64_t *base,
                                uint64_t *size);

/*
 * The symbol at or before addr (the closest one), or NULL.  *index gets
 * its position (0 .. rv_image_symbols() - 1) and *next the address where
 * the symbol that follows starts (UINT64_MAX for the last one).
 */
const RVSymbol *rv_image_symbol(const RVImage *im, uint64_t addr,
                                size_t *index, uint64_t *next);
/*
 * The symbol that holds addr, or NULL: the closest one at or before it
 * if addr is inside its size, or, for a symbol without a size, if no
 * other symbol starts in between and the symbol is in the segment that
 * holds addr (a raw image loaded after an ELF file is not its last
 * symbol's).  *index gets its position (rv_image_symbols() for none);
 * every address in [*lo, *hi), which holds addr, has the same answer.
 */
const RVSymbol *rv_image_symbol_holding(RVImage *im, uint64_t addr,
                                        size_t *index, uint64_t *lo,
                                        uint64_t *hi);
size_t rv_image_symbols(const RVImage *im);
const RVSymbol *rv_image_symbol_at(const RVImage *im, size_t index);
/* The address of a symbol by name; false if there is none. */
bool rv_image_find_symbol(const RVImage *im, const char *name,
                          uint64_t *addr);

/*
 * Disassemble every ELF file (and raw binary) added so far with objdump
 * (the program named by objdump, e.g. riscv64-unknown-elf-objdump) and
 * keep the text of each instruction.  Returns false if objdump could not
 * be run; the image stays usable without disassembly.
 */
bool rv_image_load_disasm(RVImage *im, const char *objdump);
/* The disassembly of the instruction at addr, or NULL. */
const char *rv_image_disasm(const RVImage *im, uint64_t addr);

#endif /* RVTRACE_IMAGE_H */
