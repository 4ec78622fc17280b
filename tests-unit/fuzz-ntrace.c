/*
 * libFuzzer harness of the N-trace message parser and decoder
 * (scripts/fuzz-decoder.sh ntrace; the input: fuzz-ntrace.h).  Built
 * with clang -fsanitize=fuzzer,address,undefined.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "fuzz-ntrace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_ntrace_run(data, size);
    return 0;
}
