/*
 * The end-to-end tests' definition of the workload guest's hook
 * (tests-tcg/bench/workloads.c): save the RAM sink's buffer on the host
 * (see e2e_save_buffer) and print where it wrapped.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"
#include "e2e_guest.h"

void e2e_save_trace(const uint8_t *buf, unsigned long size,
                    unsigned long wp, bool wrapped)
{
    e2e_save_buffer(0, buf, size, wp, wrapped);
}
