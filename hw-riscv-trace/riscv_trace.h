/*
 * RISC-V trace components: encoder, RAM sink and PIB (chardev) sink
 *
 * Each component is one 4 KiB block of 32-bit registers in the layout of
 * the RISC-V Trace Control Interface: Control at 0x000, Impl at 0x004.
 * An encoder traces one hart and writes its packets to every enabled sink
 * linked to it.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_RISCV_TRACE_H
#define HW_RISCV_TRACE_H

#include "hw/sysbus.h"
#include "qom/object.h"

#define RISCV_TRACE_REG_SIZE        0x1000

/* Common Control bits and Impl fields (TCI 2.1). */
#define TR_CONTROL_ACTIVE           BIT(0)
#define TR_CONTROL_ENABLE           BIT(1)
#define TR_CONTROL_EMPTY            BIT(3)
#define TR_IMPL_VER(major, minor)   ((major) | (minor) << 4)
#define TR_IMPL_TYPE_SHIFT          8
#define TR_COMP_ENCODER             0x1
#define TR_COMP_RAM_SINK            0x9
#define TR_COMP_PIB_SINK            0xA

/*
 * Sinks.  An encoder asks how many bytes a sink takes before it stops
 * (so that only whole packets are stored), then writes them.
 */
#define TYPE_RISCV_TRACE_SINK "riscv-trace-sink"
typedef struct RISCVTraceSinkClass RISCVTraceSinkClass;
DECLARE_CLASS_CHECKERS(RISCVTraceSinkClass, RISCV_TRACE_SINK,
                       TYPE_RISCV_TRACE_SINK)
#define RISCV_TRACE_SINK(obj) \
    INTERFACE_CHECK(RISCVTraceSink, (obj), TYPE_RISCV_TRACE_SINK)
typedef struct RISCVTraceSink RISCVTraceSink;

struct RISCVTraceSinkClass {
    InterfaceClass parent;
    /* Bytes the sink accepts now: 0 when off or full, SIZE_MAX unbounded */
    size_t (*space)(RISCVTraceSink *sink);
    void (*write)(RISCVTraceSink *sink, const uint8_t *buf, size_t len);
    /* End of a burst: pad to the sink's word size. */
    void (*flush)(RISCVTraceSink *sink);
};

#define TYPE_RISCV_TRACE_ENCODER "riscv-trace-encoder"
#define TYPE_RISCV_TRACE_RAMSINK "riscv-trace-ramsink"
#define TYPE_RISCV_TRACE_PIBSINK "riscv-trace-pibsink"

#endif /* HW_RISCV_TRACE_H */
