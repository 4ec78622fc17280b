/*
 * RISC-V trace encoder: where the hart's next room in the record queue is
 *
 * The queue between a hart and its encoding thread is an array of len
 * records (a power of two) with free-running head (the hart's) and tail
 * (the encoding thread's) counters.  The hart is lent a room of at most
 * batch records after head; a record of several entries (a trap's, a
 * data access's, an indexed run's: etrace_packed_len()) must not be
 * split by the end of the array, so a room never starts in the last
 * RISCV_TRACE_ROOM_MIN - 1 slots: those are padded first, which takes
 * them from the free space.  Plain C, so that a host unit test checks
 * the arithmetic (tests-unit).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_RISCV_TRACE_QUEUE_H
#define HW_RISCV_TRACE_QUEUE_H

#include "etrace-record.h"

/*
 * The most entries the hart stores before it checks for room: the
 * longest record, then one more (an indexed run, then the block after
 * it).  The smallest room; batch and len are larger.
 */
#define RISCV_TRACE_ROOM_MIN    (ETRACE_PACKED_LEN_MAX + 1)

typedef struct RISCVTraceRoom {
    uint32_t first;     /* array index of the room's first slot */
    uint32_t len;       /* its slots: at most batch, to the array's end */
    uint32_t pad;       /* pad the last slots (from head's) first */
} RISCVTraceRoom;

/*
 * The next room, or false if less than a batch would be free (after the
 * pad): then the hart waits for the encoding thread.  A room never
 * reaches a queued record.
 */
static inline bool riscv_trace_queue_room(uint32_t head, uint32_t tail,
                                          uint32_t len, uint32_t batch,
                                          RISCVTraceRoom *room)
{
    uint32_t free = len - (head - tail);
    uint32_t first = head % len;

    room->pad = len - first < RISCV_TRACE_ROOM_MIN ? len - first : 0;
    if (free < batch + room->pad) {
        return false;
    }
    if (room->pad) {
        first = 0;
    }
    room->first = first;
    room->len = len - first < batch ? len - first : batch;
    return true;
}

#endif /* HW_RISCV_TRACE_QUEUE_H */
