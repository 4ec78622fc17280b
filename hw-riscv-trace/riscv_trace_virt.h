/*
 * RISC-V trace components on the virt machine
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_RISCV_TRACE_VIRT_H
#define HW_RISCV_TRACE_VIRT_H

#include "exec/hwaddr.h"

/* An encoder and a RAM sink per hart, then a PIB sink. */
#define VIRT_TRACE_MAX_HARTS    512
#define VIRT_TRACE_SIZE         (VIRT_TRACE_MAX_HARTS * 0x2000 + 0x1000)

/* Create the components; chardev_id (or NULL) names the PIB sink's. */
void riscv_trace_virt_create(MachineState *ms, hwaddr base,
                             const char *chardev_id, Error **errp);
/* Their device-tree nodes, once the /cpus nodes exist. */
void riscv_trace_virt_fdt(MachineState *ms, hwaddr base, bool pib);
/* The machine options rvtrace and rvtrace-chardev. */
void riscv_trace_virt_class_init(ObjectClass *oc);

#endif
