/*
 * Guest builds of the project's QEMU-free files (the E-trace codec, for
 * guests that check their own trace) include "qemu/osdep.h" like every
 * QEMU source file; here it stands for the freestanding C headers and the
 * string functions of the guest library.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RVTEST_SHIM_OSDEP_H
#define RVTEST_SHIM_OSDEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "rvtest.h"

#endif
