/*
 * Guest side of RISC-V semihosting (QEMU -semihosting-config
 * enable=on,target=native): write a buffer to a file of the host, in the
 * directory QEMU runs in.  The end-to-end tests save RAM-sink buffers
 * with it.  M mode only.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef E2E_SEMIHOST_H
#define E2E_SEMIHOST_H

#include "rvtest.h"

#define SYS_OPEN    0x01
#define SYS_CLOSE   0x02
#define SYS_WRITE   0x05
#define SH_MODE_WB  5       /* fopen mode "wb" */

/*
 * The semihosting call: slli/ebreak/srai, uncompressed and in one page
 * (the function is 16-byte aligned and the sequence 12 bytes long).
 */
static unsigned long __attribute__((noinline, aligned(16), unused))
sh_call(unsigned long op, const unsigned long *args)
{
    register unsigned long a0 asm("a0") = op;
    register unsigned long a1 asm("a1") = (unsigned long)args;

    asm volatile(".option push\n"
                 ".option norvc\n"
                 "slli x0, x0, 0x1f\n"
                 "ebreak\n"
                 "srai x0, x0, 7\n"
                 ".option pop\n"
                 : "+r"(a0) : "r"(a1) : "memory");
    return a0;
}

/* Write len bytes to the host file name; false on failure. */
static inline bool sh_write_file(const char *name, const void *buf,
                                 unsigned long len)
{
    unsigned long open_args[3] = {
        (unsigned long)name, SH_MODE_WB, strlen(name),
    };
    unsigned long fd = sh_call(SYS_OPEN, open_args);
    unsigned long write_args[3] = { fd, (unsigned long)buf, len };
    bool ok;

    if (fd == (unsigned long)-1) {
        return false;
    }
    /* SYS_WRITE returns the number of bytes not written */
    ok = sh_call(SYS_WRITE, write_args) == 0;
    return sh_call(SYS_CLOSE, &fd) == 0 && ok;
}

#endif
