/*
 * RISC-V trace encoder: where the hart's next room in the record queue is
 *
 * The queue between a hart and its encoding thread is an array of len
 * records (a power of two) with free-running head (the hart's) and tail
 * (the encoding thread's) counters.  The hart is lent a room of at most
 * batch records after head; a pair of records (a trap's, a data
 * access's) must not be split by the end of the array, so a room never
 * starts on the last slot: that slot is padded first, which takes a slot
 * of the free space.  Plain C,
 * so that a host unit test checks the arithmetic (tests-unit).
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_RISCV_TRACE_QUEUE_H
#define HW_RISCV_TRACE_QUEUE_H

typedef struct RISCVTraceRoom {
    uint32_t first;     /* array index of the room's first slot */
    uint32_t len;       /* its slots: at most batch, to the array's end */
    bool pad;           /* pad the last slot (head's) first */
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

    room->pad = first == len - 1;
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
