/*
 * QTest: RISC-V CPU extension properties of this series, seen through QMP
 * (query-cpu-model-expansion), as management tools and -cpu help see them.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include "libqtest.h"
#include "qobject/qdict.h"
#include "qobject/qbool.h"
#include "qobject/qjson.h"
#include "qapi/error.h"

/* The props of a full expansion of model (with extra props as JSON). */
static QDict *expand_cpu(QTestState *qts, const char *model, const char *props)
{
    QDict *resp, *ret, *m;

    resp = qtest_qmp(qts, "{ 'execute': 'query-cpu-model-expansion',"
                     "  'arguments': { 'type': 'full',"
                     "    'model': { 'name': %s, 'props': %p } } }",
                     model, qobject_from_json(props, &error_abort));
    if (qdict_haskey(resp, "error")) {
        g_test_message("%s %s: %s", model, props,
                       qdict_get_str(qdict_get_qdict(resp, "error"), "desc"));
    }
    g_assert(qdict_haskey(resp, "return"));
    ret = qdict_get_qdict(resp, "return");
    m = qdict_get_qdict(ret, "model");
    m = qdict_get_qdict(m, "props");
    qobject_ref(m);
    qobject_unref(resp);
    return m;
}

/*
 * Extension properties are added by the accelerator (TCG), so QEMU runs
 * with -accel tcg here; libqtest's own -accel qtest comes second.
 */
static QTestState *start(const char *cpu)
{
    return qtest_initf("-machine virt -bios none -cpu %s -accel tcg", cpu);
}

static bool prop_bool(QDict *props, const char *name)
{
    g_assert_true(qdict_haskey(props, name));
    return qdict_get_bool(props, name);
}

/* A boolean property of the running hart 0, through qom-get. */
static bool hart0_prop(QTestState *qts, const char *name)
{
    QDict *resp = qtest_qmp(qts, "{ 'execute': 'qom-get', 'arguments':"
                            "  { 'path': '/machine/soc0/harts[0]',"
                            "    'property': %s } }", name);
    bool value;

    g_assert(qdict_haskey(resp, "return"));
    value = qdict_get_bool(resp, "return");
    qobject_unref(resp);
    return value;
}

/* Upstream's ratified Smctr/Ssctr: off in rv64, on in max, settable. */
static void test_ratified_ctr_unchanged(void)
{
    QTestState *qts = start("rv64");
    QDict *props;

    props = expand_cpu(qts, "rv64", "{}");
    g_assert_false(prop_bool(props, "smctr"));
    g_assert_false(prop_bool(props, "ssctr"));
    qobject_unref(props);

    props = expand_cpu(qts, "max", "{}");
    g_assert_true(prop_bool(props, "smctr"));
    g_assert_true(prop_bool(props, "ssctr"));
    qobject_unref(props);

    qtest_quit(qts);

    qts = start("rv64,smctr=on,ssctr=on,smcsrind=on,sscsrind=on");
    g_assert_true(hart0_prop(qts, "smctr"));
    g_assert_true(hart0_prop(qts, "ssctr"));
    qtest_quit(qts);
}

/*
 * The CTR v0.1.4 draft: the property ctr, off by default and in max
 * (which has the ratified CTR), implying Smcsrind and Sscsrind.
 */
static void test_draft_ctr(void)
{
    QTestState *qts = start("rv64");
    QDict *props;

    props = expand_cpu(qts, "rv64", "{}");
    g_assert_false(prop_bool(props, "ctr"));
    qobject_unref(props);
    props = expand_cpu(qts, "max", "{}");
    g_assert_false(prop_bool(props, "ctr"));
    qobject_unref(props);
    qtest_quit(qts);

    qts = start("rv64,ctr=on");
    g_assert_true(hart0_prop(qts, "ctr"));
    g_assert_true(hart0_prop(qts, "smcsrind"));
    g_assert_true(hart0_prop(qts, "sscsrind"));
    g_assert_false(hart0_prop(qts, "smctr"));
    g_assert_false(hart0_prop(qts, "ssctr"));
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    qtest_add_func("/riscv/cpu-ext/ratified-ctr-unchanged",
                   test_ratified_ctr_unchanged);
    qtest_add_func("/riscv/cpu-ext/draft-ctr", test_draft_ctr);
    return g_test_run();
}
