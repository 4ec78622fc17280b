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
#include "hw/registerfields.h"
#include "qom/object.h"

#define RISCV_TRACE_REG_SIZE        0x1000

/* Control and Impl, at the same offsets in every component (TCI 2.1). */
REG32(TR_CONTROL, 0x000)
    FIELD(TR_CONTROL, ACTIVE, 0, 1)
    FIELD(TR_CONTROL, ENABLE, 1, 1)
    FIELD(TR_CONTROL, EMPTY, 3, 1)
REG32(TR_IMPL, 0x004)
    FIELD(TR_IMPL, VER_MAJOR, 0, 4)
    FIELD(TR_IMPL, VER_MINOR, 4, 4)
    FIELD(TR_IMPL, COMP_TYPE, 8, 4)

#define TR_COMP_ENCODER             0x1
#define TR_COMP_RAM_SINK            0x9
#define TR_COMP_PIB_SINK            0xA

/* Impl of a component of this type, version 1.0 (the rest reads 0). */
static inline uint32_t riscv_trace_impl_v1(unsigned comp_type)
{
    uint32_t impl = FIELD_DP32(0, TR_IMPL, VER_MAJOR, 1);

    return FIELD_DP32(impl, TR_IMPL, COMP_TYPE, comp_type);
}

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
    /*
     * End of a burst: pad to the sink's word size with pad, the format's
     * filler (E-trace 0, N-trace idle 0xFF), which the sink also uses
     * when it is disabled in the middle of a word.
     */
    void (*flush)(RISCVTraceSink *sink, uint8_t pad);
    /*
     * The encoders call the three above from their encoding threads,
     * without the BQL (docs/rvtrace.rst, Locks): a sink locks its own
     * state.  A sink whose writes need the BQL says so here (NULL: none
     * do); its encoders then take the BQL to encode.
     */
    bool (*needs_bql)(RISCVTraceSink *sink);
};

/*
 * Before a sink's control register changes: when the hart running now is
 * traced into sink, the packets of what it retired so far reach the sink
 * first, as they would leave a hardware encoder's short pipeline, not
 * after the change (the encoder's queue holds thousands of blocks).
 */
void riscv_trace_sink_sync(RISCVTraceSink *sink);

#define TYPE_RISCV_TRACE_ENCODER "riscv-trace-encoder"
#define TYPE_RISCV_TRACE_RAMSINK "riscv-trace-ramsink"
#define TYPE_RISCV_TRACE_PIBSINK "riscv-trace-pibsink"

#endif /* HW_RISCV_TRACE_H */
