/*
 * N-trace codec: messages and encoder of RISC-V N-trace 1.0
 *
 * The second trace format of the codec library (trTeFormat 1), beside
 * E-trace (etrace.h): the same blocks in (ETraceBlock, the hart's
 * retirement records), IEEE-5001 Nexus messages out, in the MDO/MSEO
 * byte stream of a Nexus auxiliary port, so that standard N-trace
 * decoders read them unchanged.  Plain C, QEMU-free like the rest of the
 * library.
 *
 * References: RISC-V N-Trace 1.0 (message fields), its chapter "Rules of
 * Generating Messages" and the reference encoder pseudo-code there.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_NTRACE_H
#define RISCV_NTRACE_H

#include "etrace.h"

/*
 * ---------------------------------------------------------------- bytes
 *
 * Each byte is MDO[5:0] << 2 | MSEO[1:0].  MSEO 00: a message's first
 * byte, bytes of fixed fields and inner bytes of a variable field; 01:
 * the last byte of a variable field that is not the message's last
 * field; 11: the message's last byte (and idle, 0xFF).  Fields are
 * packed least significant bit first into the MDO bits; fixed fields
 * share bytes, a variable field ends its last byte.
 */
#define NTRACE_MSEO_NORMAL      0
#define NTRACE_MSEO_END_FIELD   1
#define NTRACE_MSEO_END_MESSAGE 3
#define NTRACE_IDLE             0xFF
#define NTRACE_MDO_BITS         6

/* Largest message this codec packs: every field at its largest. */
#define NTRACE_MAX_MESSAGE      48

/* TCODEs of the messages of RISC-V N-trace (table "Messages") */
typedef enum NTraceTcode {
    NTRACE_TCODE_OWNERSHIP = 2,
    NTRACE_TCODE_DIRECT_BRANCH = 3,
    NTRACE_TCODE_INDIRECT_BRANCH = 4,
    NTRACE_TCODE_ERROR = 8,
    NTRACE_TCODE_PROG_TRACE_SYNC = 9,
    NTRACE_TCODE_DIRECT_BRANCH_SYNC = 11,
    NTRACE_TCODE_INDIRECT_BRANCH_SYNC = 12,
    NTRACE_TCODE_RESOURCE_FULL = 27,
    NTRACE_TCODE_INDIRECT_BRANCH_HIST = 28,
    NTRACE_TCODE_INDIRECT_BRANCH_HIST_SYNC = 29,
    NTRACE_TCODE_REPEAT_BRANCH = 30,
    NTRACE_TCODE_PROG_TRACE_CORRELATION = 33,
} NTraceTcode;

/* B-TYPE: what ends the block an indirect message reports */
#define NTRACE_BTYPE_JUMP       0   /* indirect jump, call, return, xRET */
#define NTRACE_BTYPE_EXCEPTION  2
#define NTRACE_BTYPE_INTERRUPT  3

/* SYNC: why a sync message is sent */
#define NTRACE_SYNC_PERIODIC    2
#define NTRACE_SYNC_ENABLE      5   /* trace enabled (or filter passes) */
#define NTRACE_SYNC_OVERRUN     7   /* restart after messages were lost */

/* EVCODE of ProgTraceCorrelation */
#define NTRACE_EVCODE_DISABLED  4   /* trace disabled (or filter fails) */

/* RCODE of ResourceFull */
#define NTRACE_RCODE_ICNT       0
#define NTRACE_RCODE_HIST       1
#define NTRACE_RCODE_HIST_REPEAT 2  /* HIST, and HREPEAT times in a row */

/* Error: ETYPE 0 (messages lost), ECODE bit 2 (program trace lost) */
#define NTRACE_ETYPE_OVERRUN    0
#define NTRACE_ECODE_PROGRAM    (1u << 2)

/* Ownership PROCESS: FORMAT in bits 1:0, PRV 3:2, V 4, CONTEXT above */
#define NTRACE_PROCESS_FORMAT_PRIV      0   /* V and PRV only */
#define NTRACE_PROCESS_FORMAT_SCONTEXT  2

/* Field limits: I-CNT is at most 22 bits, HIST at most 32. */
#define NTRACE_ICNT_MAX         ((1u << 22) - 1)
#define NTRACE_HIST_BITS        31  /* history bits below the stop bit */

/*
 * One message, unpacked.  Fields a message does not carry are ignored
 * when packing and 0 after unpacking; variable fields missing at the end
 * of a received message (a Nexus message may stop early) read 0.
 * addr is the F-ADDR (address >> 1) or U-ADDR ((address ^ previous) >>
 * 1) field.  hist holds the history below its stop bit and the stop bit.
 * tstamp goes last when has_tstamp is set (unpack: when the message
 * holds a field after its last defined one).
 */
typedef struct NTraceMessage {
    unsigned tcode;
    unsigned src;
    unsigned sync;
    unsigned btype;
    unsigned etype;
    unsigned rcode;
    unsigned evcode;
    unsigned cdf;
    uint64_t icnt;
    uint64_t addr;
    uint64_t hist;
    uint64_t process;   /* Ownership */
    uint64_t ecode;     /* Error */
    uint64_t rdata;     /* ResourceFull RDATA0 */
    uint64_t hrepeat;   /* ResourceFull RDATA1 (RCODE 2) */
    uint64_t bcnt;      /* RepeatBranch */
    uint64_t tstamp;
    bool has_tstamp;
} NTraceMessage;

/*
 * The SRC field: src_bits wide (0 to 12; 0 when trTeInhibitSrc is set)
 * right after TCODE in every message.
 */
typedef struct NTraceParams {
    unsigned xlen;          /* 32 or 64: addresses are cut to it */
    unsigned src_bits;
    unsigned src_id;
} NTraceParams;

/*
 * Pack m into buf.  Returns the number of bytes (the last with MSEO 11),
 * or 0 for a TCODE this codec does not define or a field that does not
 * fit its width.
 */
size_t ntrace_message_pack(const NTraceParams *p, const NTraceMessage *m,
                           uint8_t buf[NTRACE_MAX_MESSAGE]);

/*
 * The commonest messages after DirectBranch, as ntrace_message_pack()
 * packs them without SRC or a timestamp, from their fields: HIST (with
 * its stop bit) not 0 makes an IndirectBranchHist, 0 an IndirectBranch
 * (btype below 4).  TCODE, then B-TYPE and I-CNT's low four bits in one
 * byte, I-CNT's other bits, U-ADDR and HIST: at most 1 + 11 * 3 bytes.
 * Returns the number of bytes.
 */
size_t ntrace_pack_indirect_branch(uint8_t buf[NTRACE_MAX_MESSAGE],
                                   unsigned btype, uint64_t icnt,
                                   uint64_t addr, uint64_t hist);

/*
 * BTM's commonest message, DirectBranch without SRC or a timestamp, as
 * ntrace_message_pack() packs it, for a packer that stores it in one go:
 * the little-endian word its bytes start (I-CNT at most
 * NTRACE_ICNT_MAX), and how many bytes.  Each 6-bit piece of I-CNT goes
 * to the MDO bits of its own byte after the TCODE's, the last one with
 * the message's end in MSEO.  Most branches are taken fewer than 64
 * half-words after the last: one piece, no loop.
 */
static inline __attribute__((always_inline))
size_t ntrace_direct_branch_word(uint64_t icnt, uint64_t *word)
{
    uint64_t v = NTRACE_TCODE_DIRECT_BRANCH << 2;
    size_t n = 1;

    _Static_assert(NTRACE_MAX_MESSAGE >= 8 &&
                   (uint64_t)NTRACE_ICNT_MAX >> (7 * NTRACE_MDO_BITS) == 0,
                   "a DirectBranch in one 64-bit word");
    if (__builtin_expect(icnt <= 0x3f, 1)) {
        *word = v | icnt << 10 | NTRACE_MSEO_END_MESSAGE << 8;
        return 2;
    }
    do {
        v |= (icnt & 0x3f) << (8 * n + 2);
        icnt >>= NTRACE_MDO_BITS;
        n++;
    } while (icnt);
    *word = v | (uint64_t)NTRACE_MSEO_END_MESSAGE << (8 * (n - 1));
    return n;
}

/*
 * Unpack the message at the start of buf[0..len) (idle bytes before it
 * are skipped).  Returns the bytes used, idle included (> 0); 0 if buf
 * ends inside the message; -1 if the bytes are not a message of a TCODE
 * this codec knows (*err says why).
 */
int ntrace_message_unpack(const NTraceParams *p, const uint8_t *buf,
                          size_t len, NTraceMessage *m, const char **err);

/* The message's name ("IndirectBranchHist"), or NULL if unknown. */
const char *ntrace_tcode_name(unsigned tcode);

/*
 * --------------------------------------------------------------- encoder
 *
 * The rules of "Rules of Generating Messages" on blocks (etrace.h,
 * ETraceBlock), in branch trace messaging (BTM, trTeInstMode 3) or
 * history trace messaging (HTM, 6):
 *
 * - I-CNT counts the half-words of retired instructions since the last
 *   message that carried it.  ECALL, EBREAK and C.EBREAK do not retire
 *   in N-trace (the ingress reports them retired, as E-trace has it):
 *   a trap whose EPC is the last retired instruction (causes 3, 8, 9,
 *   10, 11) takes it out of I-CNT again.
 * - BTM: a taken branch sends DirectBranch.  HTM: each branch shifts its
 *   outcome into HIST (1 taken), whose stop bit starts it; 31 branches
 *   fill it and send ResourceFull RCODE 1 with the whole register, and
 *   I-CNT goes on counting.
 * - An uninferable jump (itype 3, 6, 8, 10, 12, 13, 14) sends
 *   IndirectBranch (HTM: IndirectBranchHist, or IndirectBranch while HIST
 *   is empty) with B-TYPE 0 once the next instruction's address is known,
 *   U-ADDR against the last address sent.  A trap sends the same with
 *   B-TYPE 2 (exception) or 3 (interrupt) and the handler's address;
 *   I-CNT covers what retired before the trap.  When a trap follows an
 *   uninferable jump before its target retires, the jump's message gets
 *   the trap's EPC.
 * - Implicit return (trTeInstEnImplicitReturn): calls (itype 8, 9) push
 *   their return address on a stack of NTRACE_CALL_STACK_DEPTH entries
 *   (the oldest is dropped when full); a return (itype 13) pops it and
 *   sends nothing when the next instruction is at that address (mode 1,
 *   count only: whenever the stack was not empty), I-CNT goes on.
 * - I-CNT would pass NTRACE_ICNT_MAX: ResourceFull RCODE 0 with I-CNT,
 *   which starts again.
 * - The first traced instruction gets ProgTraceSync (SYNC 5, or 7 after
 *   a loss, preceded by Error), I-CNT 0 and F-ADDR; a trap as the first
 *   traced event gets the sync at its EPC (if the filters pass the trap).
 *   Periodic sync (trTeInstSyncMode: messages, instructions or
 *   half-words; trTeInstSyncMax): the next IndirectBranch(Hist) or
 *   DirectBranch goes out as its Sync variant (SYNC 2, F-ADDR) and the
 *   encoder state starts again.  (HTM code without uninferable jumps has
 *   no such message: it is not synced until one comes.)
 * - Ownership (trTeContext): after each sync, and before the next message
 *   when the privilege (V, PRV) or the context changed; PROCESS FORMAT 0
 *   without a context, 2 with it (scontext: the block's context).
 * - Repeat (trTeInstEnRepeatedHistory): a DirectBranch or
 *   IndirectBranch(Hist) whose fields are all those of the branch
 *   message before it (so any decoder that applies that message again
 *   follows the same path) is counted, and RepeatBranch B-CNT goes out
 *   before the next other message; HIST filled with the value it was
 *   filled with last time is counted too, and goes out as ResourceFull
 *   RCODE 2 with HREPEAT (RCODE 1 when it came once).
 * - The end of tracing, or the first block a filter does not pass,
 *   sends ProgTraceCorrelation EVCODE 4 with I-CNT (and in HTM CDF 1 and
 *   HIST); the next traced block is synced with SYNC 5.  An uninferable
 *   jump whose target was not traced ends in that I-CNT.
 */
typedef enum NTraceMode {
    NTRACE_MODE_BTM = 3,
    NTRACE_MODE_HTM = 6,
} NTraceMode;

#define NTRACE_CALL_STACK_DEPTH 32

typedef struct NTraceOptions {
    NTraceMode mode;
    ETraceIRMode implicit_return;   /* OFF, CALL_COUNTER (count only), */
                                    /* RETURN_STACK (full compare) */
    bool context;                   /* Ownership messages */
    bool repeat;                    /* RepeatBranch, ResourceFull RCODE 2 */
    ETraceSyncMode sync_mode;       /* counting messages, instructions */
                                    /* or half-words */
    unsigned sync_max;              /* period 2^(sync_max + 4) units */
} NTraceOptions;

/* A message of len bytes at bytes (NTRACE_MAX_MESSAGE are readable). */
typedef void NTraceEmitFn(void *opaque, const uint8_t *bytes, size_t len);

typedef struct NTraceEncoder NTraceEncoder;

NTraceEncoder *ntrace_encoder_new(const NTraceParams *p, NTraceEmitFn *emit,
                                  void *opaque);
void ntrace_encoder_free(NTraceEncoder *e);
/* The output window (etrace.h) for its messages, or NULL: none. */
void ntrace_encoder_set_window(NTraceEncoder *e, ETraceWindow *w);
/* Start tracing: the next traced block is synced. */
void ntrace_encoder_start(NTraceEncoder *e, const NTraceOptions *o);
/*
 * Feed one block.  A run (run > 0, with its half-words counted) is taken
 * in HTM; in BTM it is a loss (ntrace_encoder_lost).
 */
void ntrace_encoder_block(NTraceEncoder *e, const ETraceBlock *b);
/*
 * Feed records in the packed form of etrace-record.h (ep: the widths
 * their fields are cut to; context: every block's), without filters: the
 * commonest blocks are taken from their info word, the others unpacked
 * for ntrace_encoder_block().  Stops before a record (but the first) with
 * a bit of stop_mask and before a trap whose second entry is not among
 * the n; returns how many records it took.
 */
size_t ntrace_encoder_packed(NTraceEncoder *e, const ETraceParams *ep,
                             const ETracePackedBlock *pb, size_t n,
                             uint64_t context, uint64_t stop_mask);
/* End of tracing: ProgTraceCorrelation if anything is unreported. */
void ntrace_encoder_stop(NTraceEncoder *e);
/* The sink dropped messages: Error, then a sync (SYNC 7). */
void ntrace_encoder_lost(NTraceEncoder *e);

typedef struct NTraceStats {
    uint64_t messages;
    uint64_t bytes;
    uint64_t halfwords;     /* traced instruction half-words */
} NTraceStats;
void ntrace_encoder_stats(const NTraceEncoder *e, NTraceStats *s);

#endif /* RISCV_NTRACE_H */
