/*
 * RISC-V trace components on the virt machine (-machine virt,rvtrace=on)
 *
 * Per hart, an encoder and a RAM sink, 4 KiB each, at
 * base + hart * 0x2000 and base + hart * 0x2000 + 0x1000; with
 * rvtrace-chardev=ID also one PIB sink after the last pair, fed by every
 * encoder, which then trace from reset.  The device tree describes them
 * in the form of the Linux rvtrace binding: compatible
 * "qemu,trace-component", "riscv,trace-component", the encoder's hart in
 * "cpus", and OF-graph ports from encoders to sinks.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "qapi/error.h"
#include "hw/sysbus.h"
#include "hw/qdev-properties.h"
#include "hw/boards.h"
#include "chardev/char.h"
#include "system/device_tree.h"
#include "target/riscv/cpu.h"
#include "hw/riscv/virt.h"
#include "riscv_trace.h"
#include "riscv_trace_virt.h"

#define TRACE_PAIR_SIZE     (2 * RISCV_TRACE_REG_SIZE)

static hwaddr trace_encoder_base(hwaddr base, int index)
{
    return base + index * TRACE_PAIR_SIZE;
}

static hwaddr trace_pib_base(hwaddr base)
{
    return base + VIRT_TRACE_MAX_HARTS * TRACE_PAIR_SIZE;
}

void riscv_trace_virt_create(MachineState *ms, hwaddr base,
                             const char *chardev_id, Error **errp)
{
    DeviceState *pib = NULL;
    /* Bits of the hart index in the PIB stream's packet headers */
    unsigned src_bits = ms->smp.cpus > 1 ? 32 - clz32(ms->smp.cpus - 1) : 0;
    CPUState *cs;

    if (ms->smp.cpus > VIRT_TRACE_MAX_HARTS) {
        error_setg(errp, "rvtrace supports up to %d harts",
                   VIRT_TRACE_MAX_HARTS);
        return;
    }
    if (chardev_id) {
        Chardev *chr = qemu_chr_find(chardev_id);

        if (!chr) {
            error_setg(errp, "rvtrace-chardev: no chardev '%s'", chardev_id);
            return;
        }
        pib = qdev_new(TYPE_RISCV_TRACE_PIBSINK);
        qdev_prop_set_chr(pib, "chardev", chr);
        sysbus_realize_and_unref(SYS_BUS_DEVICE(pib), &error_fatal);
        sysbus_mmio_map(SYS_BUS_DEVICE(pib), 0, trace_pib_base(base));
    }
    CPU_FOREACH(cs) {
        hwaddr addr = trace_encoder_base(base, cs->cpu_index);
        DeviceState *sink = qdev_new(TYPE_RISCV_TRACE_RAMSINK);
        DeviceState *enc = qdev_new(TYPE_RISCV_TRACE_ENCODER);

        sysbus_realize_and_unref(SYS_BUS_DEVICE(sink), &error_fatal);
        sysbus_mmio_map(SYS_BUS_DEVICE(sink), 0,
                        addr + RISCV_TRACE_REG_SIZE);
        object_property_set_link(OBJECT(enc), "cpu", OBJECT(cs),
                                 &error_fatal);
        object_property_set_link(OBJECT(enc), "sink", OBJECT(sink),
                                 &error_fatal);
        if (pib) {
            object_property_set_link(OBJECT(enc), "pib", OBJECT(pib),
                                     &error_fatal);
            /* One stream for all harts: packets carry the hart's index */
            qdev_prop_set_bit(enc, "trace-from-reset", true);
            qdev_prop_set_uint32(enc, "src-id", cs->cpu_index);
            qdev_prop_set_uint32(enc, "src-bits", src_bits);
        }
        sysbus_realize_and_unref(SYS_BUS_DEVICE(enc), &error_fatal);
        sysbus_mmio_map(SYS_BUS_DEVICE(enc), 0, addr);
    }
}

static char *trace_fdt_node(void *fdt, hwaddr addr, uint32_t *phandle)
{
    static const char compat[] = "qemu,trace-component\0"
                                 "riscv,trace-component";
    char *name = g_strdup_printf("/soc/trace@%" HWADDR_PRIx, addr);

    qemu_fdt_add_subnode(fdt, name);
    qemu_fdt_setprop(fdt, name, "compatible", compat, sizeof(compat));
    qemu_fdt_setprop_cells(fdt, name, "reg", 0, addr, 0,
                           RISCV_TRACE_REG_SIZE);
    *phandle = qemu_fdt_alloc_phandle(fdt);
    qemu_fdt_setprop_cell(fdt, name, "phandle", *phandle);
    return name;
}

/* node/<ports>/port@<port>/endpoint, linked to the remote endpoint. */
static uint32_t trace_fdt_endpoint(void *fdt, const char *node,
                                   const char *ports, int port)
{
    g_autofree char *ports_name = g_strdup_printf("%s/%s", node, ports);
    g_autofree char *port_name = g_strdup_printf("%s/port@%d", ports_name,
                                                 port);
    g_autofree char *ep_name = g_strdup_printf("%s/endpoint", port_name);
    uint32_t phandle = qemu_fdt_alloc_phandle(fdt);

    if (port == 0) {
        qemu_fdt_add_subnode(fdt, ports_name);
        qemu_fdt_setprop_cell(fdt, ports_name, "#address-cells", 1);
        qemu_fdt_setprop_cell(fdt, ports_name, "#size-cells", 0);
    }
    qemu_fdt_add_subnode(fdt, port_name);
    qemu_fdt_setprop_cell(fdt, port_name, "reg", port);
    qemu_fdt_add_subnode(fdt, ep_name);
    qemu_fdt_setprop_cell(fdt, ep_name, "phandle", phandle);
    return phandle;
}

static void trace_fdt_link(void *fdt, const char *out_node, int out_port,
                           const char *in_node, int in_port)
{
    uint32_t out = trace_fdt_endpoint(fdt, out_node, "out-ports", out_port);
    uint32_t in = trace_fdt_endpoint(fdt, in_node, "in-ports", in_port);
    g_autofree char *out_ep = g_strdup_printf("%s/out-ports/port@%d/endpoint",
                                              out_node, out_port);
    g_autofree char *in_ep = g_strdup_printf("%s/in-ports/port@%d/endpoint",
                                             in_node, in_port);

    qemu_fdt_setprop_cell(fdt, out_ep, "remote-endpoint", in);
    qemu_fdt_setprop_cell(fdt, in_ep, "remote-endpoint", out);
}

void riscv_trace_virt_fdt(MachineState *ms, hwaddr base, bool pib)
{
    void *fdt = ms->fdt;
    g_autofree char *pib_node = NULL;
    uint32_t phandle;
    CPUState *cs;

    if (pib) {
        pib_node = trace_fdt_node(fdt, trace_pib_base(base), &phandle);
    }
    CPU_FOREACH(cs) {
        hwaddr addr = trace_encoder_base(base, cs->cpu_index);
        g_autofree char *cpu = g_strdup_printf("/cpus/cpu@%" PRIu64,
            (uint64_t)RISCV_CPU(cs)->env.mhartid);
        g_autofree char *enc = trace_fdt_node(fdt, addr, &phandle);
        g_autofree char *sink = trace_fdt_node(fdt,
                                               addr + RISCV_TRACE_REG_SIZE,
                                               &phandle);

        qemu_fdt_setprop_cell(fdt, enc, "cpus",
                              qemu_fdt_get_phandle(fdt, cpu));
        trace_fdt_link(fdt, enc, 0, sink, 0);
        if (pib) {
            trace_fdt_link(fdt, enc, 1, pib_node, cs->cpu_index);
        }
    }
}

/* ------------------------------------------------- machine properties */

static bool virt_get_rvtrace(Object *obj, Error **errp)
{
    return RISCV_VIRT_MACHINE(obj)->rvtrace;
}

static void virt_set_rvtrace(Object *obj, bool value, Error **errp)
{
    RISCV_VIRT_MACHINE(obj)->rvtrace = value;
}

static char *virt_get_rvtrace_chardev(Object *obj, Error **errp)
{
    return g_strdup(RISCV_VIRT_MACHINE(obj)->rvtrace_chardev);
}

static void virt_set_rvtrace_chardev(Object *obj, const char *value,
                                     Error **errp)
{
    RISCVVirtState *s = RISCV_VIRT_MACHINE(obj);

    g_free(s->rvtrace_chardev);
    s->rvtrace_chardev = g_strdup(value);
}

void riscv_trace_virt_class_init(ObjectClass *oc)
{
    object_class_property_add_bool(oc, "rvtrace", virt_get_rvtrace,
                                   virt_set_rvtrace);
    object_class_property_set_description(oc, "rvtrace",
        "Set on to add a trace encoder and a RAM trace sink per hart");
    object_class_property_add_str(oc, "rvtrace-chardev",
                                  virt_get_rvtrace_chardev,
                                  virt_set_rvtrace_chardev);
    object_class_property_set_description(oc, "rvtrace-chardev",
        "With rvtrace=on: stream every hart's trace from reset to this "
        "chardev");
}
