/*
 * Host builds of the project's QEMU-free files (classifier, codecs) include
 * "qemu/osdep.h" like every QEMU source file; outside QEMU this stands in
 * for it with the C library headers QEMU's osdep.h provides.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RVPA_HOST_SHIM_OSDEP_H
#define RVPA_HOST_SHIM_OSDEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <inttypes.h>

/* as QEMU's qemu/compiler.h */
#ifndef likely
#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#endif

#endif
