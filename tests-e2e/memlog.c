/*
 * A TCG plugin for the data trace end-to-end tests: every memory access
 * of every vCPU, after it completed, with its value, one line each:
 *
 *   VCPU PC load|store|rmw VADDR SIZE VALUE
 *
 * (hex but VCPU and SIZE in bytes), so that compare-data.py checks the
 * accesses rvtrace-decode rebuilds from a data trace against what QEMU
 * did.  An atomic read-modify-write is one "rmw" line whose value is
 * the one loaded.  Accesses wider than 8 bytes are not logged.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <inttypes.h>
#include <stdio.h>
#include <glib.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static FILE *out;
static GMutex lock;

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info,
                   uint64_t vaddr, void *udata)
{
    qemu_plugin_mem_value v = qemu_plugin_mem_get_value(info);
    uint64_t value;
    const char *kind;
    unsigned size = 1u << qemu_plugin_mem_size_shift(info);

    switch (v.type) {
    case QEMU_PLUGIN_MEM_VALUE_U8:
        value = v.data.u8;
        break;
    case QEMU_PLUGIN_MEM_VALUE_U16:
        value = v.data.u16;
        break;
    case QEMU_PLUGIN_MEM_VALUE_U32:
        value = v.data.u32;
        break;
    case QEMU_PLUGIN_MEM_VALUE_U64:
        value = v.data.u64;
        break;
    default:
        return;
    }
    if (!qemu_plugin_mem_is_store(info)) {
        kind = "load";
    } else {
        kind = (uintptr_t)udata & 1 ? "rmw" : "store";
    }
    g_mutex_lock(&lock);
    fprintf(out, "%u %" PRIx64 " %s %" PRIx64 " %u %" PRIx64 "\n", vcpu,
            (uint64_t)(uintptr_t)udata >> 1, kind, vaddr, size, value);
    g_mutex_unlock(&lock);
}

static void on_tb(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);

    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        uint32_t bits = 0;

        qemu_plugin_insn_data(insn, &bits, sizeof(bits));
        /* udata: the PC, and in bit 0 whether this is an AMO or SC */
        qemu_plugin_register_vcpu_mem_cb(insn, on_mem,
            QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW,
            (void *)(uintptr_t)(pc << 1 | ((bits & 0x7f) == 0x2f)));
    }
}

static void at_exit(qemu_plugin_id_t id, void *p)
{
    (void)id;
    (void)p;
    fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
                                           const qemu_info_t *info,
                                           int argc, char **argv)
{
    const char *path = "memlog.txt";

    (void)info;
    for (int i = 0; i < argc; i++) {
        if (g_str_has_prefix(argv[i], "out=")) {
            path = argv[i] + 4;
        }
    }
    out = fopen(path, "w");
    if (!out) {
        return -1;
    }
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
