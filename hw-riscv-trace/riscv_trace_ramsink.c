/*
 * RISC-V trace RAM sink (Trace Control Interface, trRam* registers)
 *
 * SMEM mode stores trace bytes in guest memory from Start to the inclusive
 * Limit; SRAM mode in a buffer of the device's own, read through RP and
 * Data.  The write pointer wraps to Start (setting Wrap, WPLow bit 0)
 * unless StopOnWrap turns the sink off when the buffer is full.  Bytes go
 * out LSB first; the pointers count 32-bit words, so a burst that ends
 * inside a word is padded with the trace format's filler (E-trace zero
 * bytes, N-trace idle bytes), which trace decoders skip.
 *
 * A buffer that is not entirely RAM (MMIO, holes, Limit below Start) takes
 * nothing: the encoder then reports the loss.  Mode, like Start, Limit and
 * WP, only changes while Enable is 0, and every store is checked against
 * the buffer of the mode it writes, whatever the register history: nothing
 * is ever written outside [Start, Limit + 3] of guest RAM or the SRAM.
 *
 * The encoder writes from its encoding thread, without the BQL: the sink
 * has a lock of its own (s->lock), taken inside the encoder's, and its
 * stores go to RAM only (an MMIO region would need the BQL).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "qemu/log.h"
#include "qemu/module.h"
#include "qemu/units.h"
#include "qemu/lockable.h"
#include "qemu/rcu.h"
#include "hw/sysbus.h"
#include "hw/qdev-properties.h"
#include "migration/vmstate.h"
#include "exec/address-spaces.h"
#include "exec/memory.h"
#include "riscv_trace.h"
#include "trace.h"

REG32(RAM_CONTROL, 0x000)       /* trRamControl */
    FIELD(RAM_CONTROL, MODE_SMEM, 4, 1)
    FIELD(RAM_CONTROL, STOP_ON_WRAP, 8, 1)
REG32(RAM_IMPL, 0x004)
    FIELD(RAM_IMPL, HAS_SRAM, 12, 1)
    FIELD(RAM_IMPL, HAS_SMEM, 13, 1)
REG32(RAM_START_LOW, 0x010)
REG32(RAM_START_HIGH, 0x014)
REG32(RAM_LIMIT_LOW, 0x018)
REG32(RAM_LIMIT_HIGH, 0x01C)
REG32(RAM_WP_LOW, 0x020)
    FIELD(RAM_WP_LOW, WRAP, 0, 1)
REG32(RAM_WP_HIGH, 0x024)
REG32(RAM_RP_LOW, 0x028)
REG32(RAM_RP_HIGH, 0x02C)
REG32(RAM_DATA, 0x040)

/* The Control fields software can change; the rest reads 0 (WARL). */
#define RAM_CONTROL_RW  (R_TR_CONTROL_ACTIVE_MASK | R_TR_CONTROL_ENABLE_MASK | \
                         R_RAM_CONTROL_MODE_SMEM_MASK | \
                         R_RAM_CONTROL_STOP_ON_WRAP_MASK)

OBJECT_DECLARE_SIMPLE_TYPE(RISCVTraceRamSinkState, RISCV_TRACE_RAMSINK)

struct RISCVTraceRamSinkState {
    SysBusDevice parent_obj;
    MemoryRegion mmio;

    /* Properties */
    uint32_t sram_size;     /* bytes, a power of two */

    /* Registers */
    uint32_t control;
    uint64_t start;
    uint64_t limit;
    uint64_t wp;            /* byte address of the next byte */
    bool wrap;
    uint64_t rp;

    /* the registers and the stores: MMIO and the encoders' threads */
    QemuMutex lock;
    uint8_t *sram;
    bool smem_ok;           /* [start, limit + 3] is RAM: at enable, and */
                            /* cleared when a store finds it is not */
    uint8_t pad;            /* the filler of the last flush */
};

static bool ram_smem(RISCVTraceRamSinkState *s)
{
    return s->control & R_RAM_CONTROL_MODE_SMEM_MASK;
}

static bool ram_enabled(RISCVTraceRamSinkState *s)
{
    uint32_t on = R_TR_CONTROL_ACTIVE_MASK | R_TR_CONTROL_ENABLE_MASK;

    return (s->control & on) == on;
}

/* Start and Limit of the buffer the mode uses. */
static uint64_t ram_start(RISCVTraceRamSinkState *s)
{
    return ram_smem(s) ? s->start : 0;
}

static uint64_t ram_limit(RISCVTraceRamSinkState *s)
{
    return ram_smem(s) ? s->limit : MIN(s->limit, s->sram_size - 4);
}

/* Whether [start, limit + 3] is guest RAM that the sink may fill. */
static bool ram_range_is_ram(uint64_t start, uint64_t limit)
{
    uint64_t size = limit - start + 4;
    MemoryRegionSection sec;
    bool ok;

    if (limit < start || limit + 4 < limit) {
        return false;
    }
    sec = memory_region_find(get_system_memory(), start, size);
    if (!sec.mr) {
        return false;
    }
    ok = memory_region_is_ram(sec.mr) && !memory_region_is_rom(sec.mr) &&
         int128_get64(sec.size) == size;
    memory_region_unref(sec.mr);
    return ok;
}

/* --------------------------------------------------------------- sink */

/*
 * WP inside the buffer of the current mode.  The register rules keep it
 * there; this is the last line of defence for every store, so that no
 * register history can make the sink write outside its buffer.
 */
static void ram_keep_wp_inside(RISCVTraceRamSinkState *s)
{
    if (s->wp < ram_start(s) || s->wp > ram_limit(s) + 3) {
        qemu_log_mask(LOG_GUEST_ERROR, "riscv-trace-ramsink: WP 0x%" PRIx64
                      " outside the buffer, restarting at Start\n", s->wp);
        s->wp = ram_start(s);
    }
}

/* The sink's interface (RISCVTraceSinkClass), with s->lock held */
static size_t ram_space_locked(RISCVTraceRamSinkState *s)
{
    ram_keep_wp_inside(s);
    if (!ram_enabled(s) || (ram_smem(s) && !s->smem_ok)) {
        return 0;
    }
    if (s->control & R_RAM_CONTROL_STOP_ON_WRAP_MASK) {
        return ram_limit(s) + 4 - s->wp;
    }
    return SIZE_MAX;
}

/*
 * Guest memory that is still RAM (checked again at each store: the memory
 * map may have changed since Enable).  Returns false, storing nothing,
 * where it is not.  The store itself skips what is not RAM or ROM by
 * then (address_space_write_rom() never dispatches to MMIO, which would
 * take the BQL under the encoder's lock); ROM is ruled out just before.
 */
static bool ram_store_smem(uint64_t addr, const uint8_t *buf, size_t len)
{
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;
    MemoryRegion *mr;
    hwaddr xlat, l = len;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(&address_space_memory, addr, &xlat, &l,
                                 true, attrs);
    if (l < len || !memory_access_is_direct(mr, true, attrs)) {
        return false;
    }
    address_space_write_rom(&address_space_memory, addr, attrs, buf, len);
    return true;
}

/* False when guest memory stopped being RAM: the sink then takes nothing */
static bool ram_store(RISCVTraceRamSinkState *s, uint64_t addr,
                      const uint8_t *buf, size_t len)
{
    if (!ram_smem(s)) {
        if (addr < s->sram_size && len <= s->sram_size - addr) {
            memcpy(s->sram + addr, buf, len);
        }
        return true;
    }
    if (!ram_store_smem(addr, buf, len)) {
        qemu_log_mask(LOG_GUEST_ERROR, "riscv-trace-ramsink: the buffer "
                      "at 0x%" PRIx64 " is no longer RAM\n", addr);
        s->smem_ok = false;
        return false;
    }
    return true;
}

static void ram_write_locked(RISCVTraceRamSinkState *s, const uint8_t *buf,
                             size_t len)
{
    uint64_t end = ram_limit(s) + 4;

    while (len && ram_space_locked(s)) {
        size_t n = MIN(len, end - s->wp);

        if (!ram_store(s, s->wp, buf, n)) {
            break;
        }
        s->wp += n;
        buf += n;
        len -= n;
        if (s->wp == end) {
            s->wp = ram_start(s);
            s->wrap = true;
            if (s->control & R_RAM_CONTROL_STOP_ON_WRAP_MASK) {
                s->control &= ~R_TR_CONTROL_ENABLE_MASK;
            }
        }
    }
    trace_riscv_trace_ramsink_write(s->wp, len);
}

/* Pad to a word with the format's filler: WP counts words. */
static void ram_flush_locked(RISCVTraceRamSinkState *s, uint8_t pad)
{
    uint8_t fill[4];

    s->pad = pad;
    if (s->wp & 3) {
        memset(fill, pad, sizeof(fill));
        ram_write_locked(s, fill, 4 - (s->wp & 3));
    }
}

static size_t ram_space(RISCVTraceSink *sink)
{
    RISCVTraceRamSinkState *s = RISCV_TRACE_RAMSINK(sink);

    QEMU_LOCK_GUARD(&s->lock);
    return ram_space_locked(s);
}

static void ram_write(RISCVTraceSink *sink, const uint8_t *buf, size_t len)
{
    RISCVTraceRamSinkState *s = RISCV_TRACE_RAMSINK(sink);

    QEMU_LOCK_GUARD(&s->lock);
    ram_write_locked(s, buf, len);
}

static void ram_flush(RISCVTraceSink *sink, uint8_t pad)
{
    RISCVTraceRamSinkState *s = RISCV_TRACE_RAMSINK(sink);

    QEMU_LOCK_GUARD(&s->lock);
    ram_flush_locked(s, pad);
}

/* ---------------------------------------------------------- registers */

static void ram_write_control(RISCVTraceRamSinkState *s, uint32_t val)
{
    uint32_t old = s->control;

    if (!(val & R_TR_CONTROL_ACTIVE_MASK)) {
        s->control = 0;
        return;
    }
    if (!(old & R_TR_CONTROL_ACTIVE_MASK)) {
        s->control = R_TR_CONTROL_ACTIVE_MASK | R_RAM_CONTROL_MODE_SMEM_MASK;
        return;
    }
    s->control = val & RAM_CONTROL_RW;
    if (old & R_TR_CONTROL_ENABLE_MASK) {
        /* The buffer the sink writes does not change under it. */
        s->control = FIELD_DP32(s->control, RAM_CONTROL, MODE_SMEM,
                                FIELD_EX32(old, RAM_CONTROL, MODE_SMEM));
    }
    if (!(old & R_TR_CONTROL_ENABLE_MASK) && (val & R_TR_CONTROL_ENABLE_MASK)) {
        s->smem_ok = ram_range_is_ram(s->start, s->limit);
        if (s->wp < ram_start(s) || s->wp > ram_limit(s)) {
            s->wp = ram_start(s);
        }
    }
    if ((old & R_TR_CONTROL_ENABLE_MASK) && !(val & R_TR_CONTROL_ENABLE_MASK)) {
        /* Enable 1->0 flushes: no partial word is left behind. */
        s->control |= R_TR_CONTROL_ENABLE_MASK;
        ram_flush_locked(s, s->pad);
        s->control &= ~R_TR_CONTROL_ENABLE_MASK;
    }
}

static uint32_t ram_impl(void)
{
    return riscv_trace_impl_v1(TR_COMP_RAM_SINK) |
           R_RAM_IMPL_HAS_SRAM_MASK | R_RAM_IMPL_HAS_SMEM_MASK;
}

static uint64_t ram_data(RISCVTraceRamSinkState *s)
{
    uint64_t rp = s->rp;

    if (ram_smem(s) || rp > ram_limit(s)) {
        return 0;
    }
    s->rp = rp + 4 > ram_limit(s) ? 0 : rp + 4;
    return ldl_le_p(s->sram + rp);
}

static uint64_t ram_read(void *opaque, hwaddr addr, unsigned size)
{
    RISCVTraceRamSinkState *s = opaque;
    uint64_t val = 0;

    QEMU_LOCK_GUARD(&s->lock);
    switch (addr) {
    case A_RAM_CONTROL:
        val = s->control | R_TR_CONTROL_EMPTY_MASK;
        break;
    case A_RAM_IMPL:
        val = ram_impl();
        break;
    case A_RAM_START_LOW:
        val = (uint32_t)ram_start(s);
        break;
    case A_RAM_START_HIGH:
        val = ram_start(s) >> 32;
        break;
    case A_RAM_LIMIT_LOW:
        val = (uint32_t)ram_limit(s);
        break;
    case A_RAM_LIMIT_HIGH:
        val = ram_limit(s) >> 32;
        break;
    case A_RAM_WP_LOW:
        val = FIELD_DP32((uint32_t)(s->wp & ~3ULL), RAM_WP_LOW, WRAP,
                         s->wrap);
        break;
    case A_RAM_WP_HIGH:
        val = s->wp >> 32;
        break;
    case A_RAM_RP_LOW:
        val = (uint32_t)s->rp;
        break;
    case A_RAM_RP_HIGH:
        val = s->rp >> 32;
        break;
    case A_RAM_DATA:
        val = ram_data(s);
        break;
    }
    if (!(s->control & R_TR_CONTROL_ACTIVE_MASK) && addr > A_RAM_IMPL) {
        val = 0;
    }
    trace_riscv_trace_ramsink_read(addr, val);
    return val;
}

static uint64_t ram_set_half(uint64_t reg, hwaddr addr, uint64_t val)
{
    return addr & 4 ? deposit64(reg, 32, 32, val) :
                      deposit64(reg, 0, 32, val & ~3ULL);
}

static void ram_mmio_write(void *opaque, hwaddr addr, uint64_t val,
                           unsigned size)
{
    RISCVTraceRamSinkState *s = opaque;

    trace_riscv_trace_ramsink_mmio_write(addr, val);
    if (addr == A_RAM_CONTROL) {
        /* (it takes the encoders' locks, which come before s->lock) */
        riscv_trace_sink_sync(RISCV_TRACE_SINK(s));
    }
    QEMU_LOCK_GUARD(&s->lock);
    if (addr == A_RAM_CONTROL) {
        ram_write_control(s, val);
        return;
    }
    /* Pointers are writable while Active and not Enabled. */
    if ((s->control & (R_TR_CONTROL_ACTIVE_MASK | R_TR_CONTROL_ENABLE_MASK)) !=
        R_TR_CONTROL_ACTIVE_MASK) {
        qemu_log_mask(LOG_GUEST_ERROR, "riscv-trace-ramsink: write to 0x%"
                      HWADDR_PRIx " while not Active or while Enabled, "
                      "ignored\n", addr);
        return;
    }
    switch (addr) {
    case A_RAM_START_LOW:
    case A_RAM_START_HIGH:
        s->start = ram_set_half(s->start, addr, val);
        break;
    case A_RAM_LIMIT_LOW:
    case A_RAM_LIMIT_HIGH:
        s->limit = ram_set_half(s->limit, addr, val);
        break;
    case A_RAM_WP_LOW:
    case A_RAM_WP_HIGH:
        s->wp = ram_set_half(s->wp, addr, val);
        s->wrap = false;
        break;
    case A_RAM_RP_LOW:
    case A_RAM_RP_HIGH:
        s->rp = MIN(ram_set_half(s->rp, addr, val), s->sram_size - 4);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "riscv-trace-ramsink: write to "
                      "read-only or unimplemented register 0x%" HWADDR_PRIx
                      ", ignored\n", addr);
        break;
    }
}

static const MemoryRegionOps ram_ops = {
    .read = ram_read,
    .write = ram_mmio_write,
    .endianness = DEVICE_LITTLE_ENDIAN,
    .valid = {
        .min_access_size = 4,
        .max_access_size = 4,
    },
};

/* ------------------------------------------------------------- device */

static void ram_reset(DeviceState *dev)
{
    RISCVTraceRamSinkState *s = RISCV_TRACE_RAMSINK(dev);

    QEMU_LOCK_GUARD(&s->lock);
    trace_riscv_trace_ramsink_reset();
    s->control = 0;
    s->start = s->wp = s->rp = 0;
    s->limit = s->sram_size - 4;    /* SRAM: the whole buffer */
    s->wrap = false;
    s->pad = 0;
    s->smem_ok = false;
}

static void ram_realize(DeviceState *dev, Error **errp)
{
    RISCVTraceRamSinkState *s = RISCV_TRACE_RAMSINK(dev);

    if (s->sram_size < 4 || !is_power_of_2(s->sram_size)) {
        error_setg(errp, "riscv-trace-ramsink: sram-size must be a power "
                   "of two of at least 4 bytes");
        return;
    }
    qemu_mutex_init(&s->lock);
    s->sram = g_malloc0(s->sram_size);
    memory_region_init_io(&s->mmio, OBJECT(dev), &ram_ops, s,
                          TYPE_RISCV_TRACE_RAMSINK, RISCV_TRACE_REG_SIZE);
    sysbus_init_mmio(SYS_BUS_DEVICE(dev), &s->mmio);
}

static void ram_unrealize(DeviceState *dev)
{
    RISCVTraceRamSinkState *s = RISCV_TRACE_RAMSINK(dev);

    g_free(s->sram);
    s->sram = NULL;
    qemu_mutex_destroy(&s->lock);
}

static int ram_post_load(void *opaque, int version_id)
{
    RISCVTraceRamSinkState *s = opaque;

    QEMU_LOCK_GUARD(&s->lock);
    s->smem_ok = ram_range_is_ram(s->start, s->limit);
    s->rp = MIN(s->rp, s->sram_size - 4);
    ram_keep_wp_inside(s);
    return 0;
}

static bool ram_pad_needed(void *opaque)
{
    RISCVTraceRamSinkState *s = opaque;

    return s->pad != 0;
}

/* The filler of an N-trace stream (E-trace's, 0, is the default). */
static const VMStateDescription vmstate_ram_pad = {
    .name = TYPE_RISCV_TRACE_RAMSINK "/pad",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = ram_pad_needed,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT8(pad, RISCVTraceRamSinkState),
        VMSTATE_END_OF_LIST()
    }
};

static const VMStateDescription vmstate_ram = {
    .name = TYPE_RISCV_TRACE_RAMSINK,
    .version_id = 1,
    .minimum_version_id = 1,
    .post_load = ram_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(control, RISCVTraceRamSinkState),
        VMSTATE_UINT64(start, RISCVTraceRamSinkState),
        VMSTATE_UINT64(limit, RISCVTraceRamSinkState),
        VMSTATE_UINT64(wp, RISCVTraceRamSinkState),
        VMSTATE_BOOL(wrap, RISCVTraceRamSinkState),
        VMSTATE_UINT64(rp, RISCVTraceRamSinkState),
        VMSTATE_VBUFFER_UINT32(sram, RISCVTraceRamSinkState, 1, NULL,
                               sram_size),
        VMSTATE_END_OF_LIST()
    },
    .subsections = (const VMStateDescription * const []) {
        &vmstate_ram_pad,
        NULL
    }
};

static const Property ram_properties[] = {
    DEFINE_PROP_UINT32("sram-size", RISCVTraceRamSinkState, sram_size,
                       64 * KiB),
};

static void ram_class_init(ObjectClass *klass, void *data)
{
    DeviceClass *dc = DEVICE_CLASS(klass);
    RISCVTraceSinkClass *sc = RISCV_TRACE_SINK_CLASS(klass);

    dc->realize = ram_realize;
    dc->unrealize = ram_unrealize;
    device_class_set_legacy_reset(dc, ram_reset);
    dc->vmsd = &vmstate_ram;
    dc->desc = "RISC-V trace RAM sink";
    dc->user_creatable = false;
    device_class_set_props(dc, ram_properties);
    sc->space = ram_space;
    sc->write = ram_write;
    sc->flush = ram_flush;
}

static const TypeInfo ram_info = {
    .name = TYPE_RISCV_TRACE_RAMSINK,
    .parent = TYPE_SYS_BUS_DEVICE,
    .instance_size = sizeof(RISCVTraceRamSinkState),
    .class_init = ram_class_init,
    .interfaces = (InterfaceInfo[]) {
        { TYPE_RISCV_TRACE_SINK },
        { }
    },
};

static void ram_register_types(void)
{
    type_register_static(&ram_info);
}

type_init(ram_register_types)
