/*
 * RISC-V trace PIB sink: trace bytes streamed to a QEMU character device
 *
 * Modelled on the Trace Control Interface's PIB sink (component type 0xA),
 * whose pins become a chardev here: a host file or socket receives every
 * byte of the encoders linked to it, so a whole run of any length can be
 * captured without the guest's help.  Registers: trPibControl (Active,
 * Enable, Empty) and trPibImpl.  Several encoders may share one sink; their
 * packets then carry source IDs (trTeInstFeatures.SrcID/SrcBits).
 * The encoders write from their encoding threads, without the BQL: the
 * sink's lock (s->lock, taken inside an encoder's) keeps each write
 * whole and the registers consistent.  Chardev writes serialise on the
 * chardev's own lock, but only some backends need nothing else (files,
 * pipes, host serial lines, sockets, null); with others (a mux, a
 * virtual console) the encoders take the BQL to encode (pib_needs_bql()).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/lockable.h"
#include "hw/sysbus.h"
#include "hw/qdev-properties.h"
#include "hw/qdev-properties-system.h"
#include "chardev/char-fe.h"
#include "chardev/char-fd.h"
#include "migration/vmstate.h"
#include "riscv_trace.h"
#include "trace.h"

REG32(PIB_CONTROL, 0x000)
REG32(PIB_IMPL, 0x004)

OBJECT_DECLARE_SIMPLE_TYPE(RISCVTracePibSinkState, RISCV_TRACE_PIBSINK)

struct RISCVTracePibSinkState {
    SysBusDevice parent_obj;
    MemoryRegion mmio;
    CharBackend chr;
    QemuMutex lock;         /* control, bytes, and each write whole */
    bool writes_need_bql;   /* the backend's, from realize */
    bool start_enabled;     /* property: enabled from reset */
    uint32_t control;
    uint64_t bytes;         /* streamed so far, for tracing */
};

static bool pib_takes(RISCVTracePibSinkState *s)
{
    uint32_t on = R_TR_CONTROL_ACTIVE_MASK | R_TR_CONTROL_ENABLE_MASK;

    return (s->control & on) == on && qemu_chr_fe_backend_connected(&s->chr);
}

static size_t pib_space(RISCVTraceSink *sink)
{
    RISCVTracePibSinkState *s = RISCV_TRACE_PIBSINK(sink);

    QEMU_LOCK_GUARD(&s->lock);
    return pib_takes(s) ? SIZE_MAX : 0;
}

static void pib_write(RISCVTraceSink *sink, const uint8_t *buf, size_t len)
{
    RISCVTracePibSinkState *s = RISCV_TRACE_PIBSINK(sink);

    QEMU_LOCK_GUARD(&s->lock);
    if (!pib_takes(s)) {
        return;     /* disabled since the encoder asked: lost */
    }
    /* Blocking, so that a slow consumer slows the guest, not the trace */
    qemu_chr_fe_write_all(&s->chr, buf, len);
    s->bytes += len;
    trace_riscv_trace_pibsink_write(len, s->bytes);
}

static void pib_flush(RISCVTraceSink *sink, uint8_t pad)
{
}

static bool pib_needs_bql(RISCVTraceSink *sink)
{
    return RISCV_TRACE_PIBSINK(sink)->writes_need_bql;
}

/*
 * Backends a thread without the BQL may write to: their write touches
 * only their file descriptor or socket (a socket's disconnect event goes
 * to this device's frontend, which has no handlers).  Not a mux (its
 * other frontends would get events on the encoding thread), not a
 * virtual console (it draws).
 */
static bool pib_backend_needs_bql(Chardev *chr)
{
    return chr && !object_dynamic_cast(OBJECT(chr), TYPE_CHARDEV_FD) &&
           !object_dynamic_cast(OBJECT(chr), TYPE_CHARDEV_SOCKET) &&
           !object_dynamic_cast(OBJECT(chr), TYPE_CHARDEV_NULL);
}

static uint64_t pib_read(void *opaque, hwaddr addr, unsigned size)
{
    RISCVTracePibSinkState *s = opaque;
    uint64_t val = 0;

    QEMU_LOCK_GUARD(&s->lock);
    switch (addr) {
    case A_PIB_CONTROL:
        val = s->control | R_TR_CONTROL_EMPTY_MASK;
        break;
    case A_PIB_IMPL:
        val = riscv_trace_impl_v1(TR_COMP_PIB_SINK);
        break;
    }
    trace_riscv_trace_pibsink_read(addr, val);
    return val;
}

static void pib_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    RISCVTracePibSinkState *s = opaque;

    trace_riscv_trace_pibsink_mmio_write(addr, val);
    if (addr != A_PIB_CONTROL) {
        qemu_log_mask(LOG_GUEST_ERROR, "riscv-trace-pibsink: write to "
                      "read-only or unimplemented register 0x%" HWADDR_PRIx
                      ", ignored\n", addr);
        return;
    }
    /* (it takes the encoders' locks, which come before s->lock) */
    riscv_trace_sink_sync(RISCV_TRACE_SINK(s));
    QEMU_LOCK_GUARD(&s->lock);
    if (!(val & R_TR_CONTROL_ACTIVE_MASK)) {
        s->control = 0;
    } else if (!(s->control & R_TR_CONTROL_ACTIVE_MASK)) {
        s->control = R_TR_CONTROL_ACTIVE_MASK;
    } else {
        s->control = val & (R_TR_CONTROL_ACTIVE_MASK |
                            R_TR_CONTROL_ENABLE_MASK);
    }
}

static const MemoryRegionOps pib_ops = {
    .read = pib_read,
    .write = pib_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

static void pib_reset(DeviceState *dev)
{
    RISCVTracePibSinkState *s = RISCV_TRACE_PIBSINK(dev);

    QEMU_LOCK_GUARD(&s->lock);
    trace_riscv_trace_pibsink_reset();
    s->control = s->start_enabled ?
                 R_TR_CONTROL_ACTIVE_MASK | R_TR_CONTROL_ENABLE_MASK : 0;
}

static void pib_realize(DeviceState *dev, Error **errp)
{
    RISCVTracePibSinkState *s = RISCV_TRACE_PIBSINK(dev);

    qemu_mutex_init(&s->lock);
    s->writes_need_bql = pib_backend_needs_bql(qemu_chr_fe_get_driver(&s->chr));
    /* Ready before any encoder's reset, which may start tracing */
    pib_reset(dev);
    memory_region_init_io(&s->mmio, OBJECT(dev), &pib_ops, s,
                          TYPE_RISCV_TRACE_PIBSINK, RISCV_TRACE_REG_SIZE);
    sysbus_init_mmio(SYS_BUS_DEVICE(dev), &s->mmio);
}

static const VMStateDescription vmstate_pib = {
    .name = TYPE_RISCV_TRACE_PIBSINK,
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(control, RISCVTracePibSinkState),
        VMSTATE_END_OF_LIST()
    }
};

static const Property pib_properties[] = {
    DEFINE_PROP_CHR("chardev", RISCVTracePibSinkState, chr),
    DEFINE_PROP_BOOL("start-enabled", RISCVTracePibSinkState, start_enabled,
                     true),
};

static void pib_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    RISCVTraceSinkClass *sc = RISCV_TRACE_SINK_CLASS(klass);

    dc->realize = pib_realize;
    device_class_set_legacy_reset(dc, pib_reset);
    dc->vmsd = &vmstate_pib;
    dc->desc = "RISC-V trace sink streaming to a character device";
    dc->user_creatable = false;
    device_class_set_props(dc, pib_properties);
    sc->space = pib_space;
    sc->write = pib_write;
    sc->needs_bql = pib_needs_bql;
    sc->flush = pib_flush;
}

static const TypeInfo pib_info = {
    .name = TYPE_RISCV_TRACE_PIBSINK,
    .parent = TYPE_SYS_BUS_DEVICE,
    .instance_size = sizeof(RISCVTracePibSinkState),
    .class_init = pib_class_init,
    .interfaces = (InterfaceInfo[]) {
        { TYPE_RISCV_TRACE_SINK },
        { }
    },
};

static void pib_register_types(void)
{
    type_register_static(&pib_info);
}

type_init(pib_register_types)
