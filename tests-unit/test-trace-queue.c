/*
 * The record queue's room arithmetic (hw-riscv-trace/riscv_trace_queue.h):
 * for every head and tail of small queues, a room lent to the hart never
 * reaches a queued record, never crosses the array's end, holds the
 * longest record and one more, and is refused only when less than a
 * batch (after the pad) is free.  The pad once took a slot the room then reached: the
 * hart overwrote the oldest record the encoding thread had not read.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "qemu/osdep.h"
#include <glib.h>
#include "riscv_trace_queue.h"

/* Whether array slot i holds a queued record (tail <= k < head). */
static bool queued(uint32_t i, uint32_t head, uint32_t tail, uint32_t len)
{
    for (uint32_t k = tail; k != head; k++) {
        if (k % len == i) {
            return true;
        }
    }
    return false;
}

static void check_queue(uint32_t len, uint32_t batch)
{
    /* counters near the wrap of uint32_t too */
    static const uint32_t base[] = { 0, 0xfffffff0u };

    for (unsigned b = 0; b < G_N_ELEMENTS(base); b++) {
        for (uint32_t t = 0; t < 2 * len; t++) {
            for (uint32_t n = 0; n <= len; n++) {
                uint32_t tail = base[b] + t, head = tail + n;
                uint32_t free = len - n;
                RISCVTraceRoom r;
                uint32_t to_end = len - head % len;
                uint32_t pad = to_end < RISCV_TRACE_ROOM_MIN ? to_end : 0;
                bool ok = riscv_trace_queue_room(head, tail, len, batch, &r);

                if (!ok) {
                    g_assert_cmpuint(free, <, batch + pad);
                    continue;
                }
                g_assert_cmpuint(r.pad, ==, pad);
                g_assert_cmpuint(r.len, >=, RISCV_TRACE_ROOM_MIN);
                g_assert_cmpuint(r.len, <=, batch);
                g_assert_cmpuint(r.first + r.len, <=, len);
                /* the pad's slots, then the room: all free */
                for (uint32_t i = 0; i < r.pad; i++, head++) {
                    g_assert_false(queued(len - r.pad + i, head, tail, len));
                }
                for (uint32_t i = r.first; i < r.first + r.len; i++) {
                    g_assert_false(queued(i, head, tail, len));
                }
            }
        }
    }
}

static void test_rooms(void)
{
    check_queue(16, RISCV_TRACE_ROOM_MIN);
    check_queue(32, RISCV_TRACE_ROOM_MIN + 2);
    check_queue(64, 16);
}

/* The case that lost a record: exactly a batch free, head on the end. */
static void test_pad_takes_a_slot(void)
{
    RISCVTraceRoom r;
    uint32_t len = 1024, batch = 256, head = len - 1;

    g_assert_false(riscv_trace_queue_room(head, head - (len - batch), len,
                                          batch, &r));
    g_assert_true(riscv_trace_queue_room(head, head - (len - batch - 1), len,
                                         batch, &r));
    g_assert_cmpuint(r.pad, ==, 1);
    g_assert_cmpuint(r.first, ==, 0);
    g_assert_cmpuint(r.len, ==, batch);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/trace-queue/rooms", test_rooms);
    g_test_add_func("/trace-queue/pad-takes-a-slot", test_pad_takes_a_slot);
    return g_test_run();
}
