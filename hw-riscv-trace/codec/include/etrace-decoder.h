/*
 * E-trace decoder: rebuild the executed instruction sequence from packets
 *
 * The decoder of chapter 11 (pseudo code of 11.1) extended to every mode
 * the encoder offers: full address, implicit exception, sequentially
 * inferable jumps, implicit return (call counter and return address
 * stack), branch prediction and the jump target cache (3.2.2-3.2.7).
 *
 * Layers: bytes (fed in chunks of any size) -> packets (etrace_packet_
 * unpack) -> instruction flow, walked through the program image that a
 * callback reads.  Results leave through callbacks: one per retired
 * instruction and one per event (sync, trap, gap, error...).  Memory use
 * does not depend on the length of the trace.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_DECODER_H
#define RISCV_ETRACE_DECODER_H

#include "target/riscv/insn_class.h"
#include "etrace.h"
#include "etrace-data.h"

typedef struct ETraceDecoder ETraceDecoder;

typedef enum ETraceDecEventType {
    ETRACE_DEC_SUPPORT,     /* support packet: enable, options, qual_status */
    ETRACE_DEC_SYNC,        /* format 3 subformat 0: synchronised at address */
    ETRACE_DEC_TRAP,        /* format 3 subformat 1: trap into address */
    ETRACE_DEC_CONTEXT,     /* format 3 subformat 2 (imprecise context) */
    ETRACE_DEC_NOTIFY,      /* address reported on request (trigger[2]) */
    ETRACE_DEC_GAP,         /* no instructions for a while: gap_reason */
    ETRACE_DEC_END,         /* encoder disabled: end of trace */
    ETRACE_DEC_ERROR,       /* bad input: the decoder waits for a sync */
    /*
     * A data packet (chapter 7): data, the next access of the stream
     * (etrace-dec-data.h gives it to its instruction)
     */
    ETRACE_DEC_DATA,
} ETraceDecEventType;

/* Why a GAP leaves instructions out. */
typedef enum ETraceGapReason {
    ETRACE_GAP_QUALIFICATION,   /* qualification ended (ended_rep, _upd) */
    ETRACE_GAP_TRACE_LOST,      /* the encoder lost packets (trace_lost) */
    /*
     * The walk needs an instruction at gap_addr and no image holds it
     * (code the decoder was not given: user space, a vDSO, code written
     * at run time).  Not bad input: the decoder waits for the next sync,
     * and the instructions outside the image up to it are one gap.
     */
    ETRACE_GAP_NO_IMAGE,
} ETraceGapReason;

typedef struct ETraceDecEvent {
    ETraceDecEventType type;
    uint64_t offset;        /* stream offset of the packet's first byte */
    uint64_t packet;        /* packet number, from 0 */
    /*
     * SYNC, TRAP, NOTIFY: the reported instruction; GAP, END: the last
     * decoded instruction (valid if last_valid).
     */
    uint64_t address;
    bool last_valid;
    unsigned privilege;
    uint64_t context;
    /*
     * TRAP: address is the handler's first instruction, or with 2.0's
     * thaddr 0 (the handler trapped before retiring anything) the EPC
     * and handler_valid is false.
     */
    bool handler_valid;
    uint64_t cause;
    bool interrupt;
    uint64_t tvalepc;       /* epc for illegal instruction, else tval */
    uint64_t trap_from;     /* last instruction retired before the trap */
    bool trap_from_valid;
    /* GAP */
    ETraceGapReason gap_reason;
    uint64_t gap_addr;      /* ETRACE_GAP_NO_IMAGE: the address */
    /* SUPPORT, GAP (but NO_IMAGE), END */
    bool enable;
    ETraceQualStatus qual_status;
    /*
     * SUPPORT: the packet's; every other event: those the decoder
     * follows (the last support packet's, else the run-time options,
     * with data set once a data packet came)
     */
    ETraceOptions options;
    /* ERROR */
    const char *error;
    /* DATA (options: the layout, data_no_address among them) */
    ETraceDataAccess data;
} ETraceDecEvent;

/*
 * Read the 16-bit instruction parcel at addr from the program image.
 * Returns false if addr is not in the image: a walk that needs it ends
 * in an ETRACE_GAP_NO_IMAGE gap.
 */
typedef bool ETraceReadParcelFn(void *opaque, uint64_t addr,
                                uint16_t *parcel);
/*
 * One retired instruction, in program order: the element a tool prints or
 * counts, with what the shared classifier (target/riscv/insn_class.h)
 * says of it, so that no tool decodes instructions again.  A branch's
 * outcome shows in the next instruction's address.
 */
typedef struct ETraceDecInsn {
    uint64_t addr;
    unsigned privilege;
    unsigned len;           /* 2 or 4 */
    bool branch;            /* a conditional branch */
    /*
     * A jump: its class (calls, tail calls, returns, co-routine swaps,
     * other jumps, E-trace 4.1.1); a trap return: RISCV_ITYPE_TRAP_RETURN;
     * else RISCV_ITYPE_NONE.
     */
    RISCVIType itype;
} ETraceDecInsn;

typedef void ETraceInsnFn(void *opaque, const ETraceDecInsn *insn);
/*
 * n instructions retired in sequence from addr, none of them a control
 * transfer; instruction i is 4 bytes long if bit i of lens4 is set, else
 * 2.  Optional (it is the fast way to take straight-line code): without
 * it, ETraceInsnFn gets them one by one.
 */
typedef void ETraceInsnRunFn(void *opaque, uint64_t addr, unsigned privilege,
                             unsigned n, uint64_t lens4);
/*
 * The instructions of such a run, one element each, to insn: what the
 * decoder does without an ETraceInsnRunFn, and what a tool's run callback
 * can do for the runs it does not take whole.
 */
void etrace_decoder_run_insns(ETraceInsnFn *insn, void *opaque,
                              uint64_t addr, unsigned privilege, unsigned n,
                              uint64_t lens4);
typedef void ETraceEventFn(void *opaque, const ETraceDecEvent *ev);
/*
 * Implicit exception mode (3.2.3): the first instruction of the handler of
 * this trap, entered at privilege.  Returns false if unknown.
 */
typedef bool ETraceTrapVectorFn(void *opaque, unsigned privilege,
                                uint64_t cause, bool interrupt,
                                uint64_t *handler);

typedef struct ETraceDecoderConfig {
    ETraceParams params;
    /*
     * The traced hart's extensions that change what encodings mean
     * (RISCV_INSN_ISA_*: Zcmp, Zcmt), which no packet says
     */
    unsigned isa;
    /* Options until the first support packet (usually all off). */
    ETraceOptions options;
    ETraceReadParcelFn *read_parcel;    /* required */
    ETraceInsnFn *insn;                 /* may be NULL */
    ETraceInsnRunFn *insn_run;          /* may be NULL */
    ETraceEventFn *event;               /* may be NULL */
    /*
     * Trap handlers in implicit exception mode: trap_vector if set, else
     * xtvec[privilege] read as the xtvec CSR (BASE | MODE: 1 = vectored,
     * interrupts go to BASE + 4 * cause).
     */
    ETraceTrapVectorFn *trap_vector;
    uint64_t xtvec[4];
    /*
     * Instructions followed without consuming a branch before the decoder
     * gives up (a path that never reaches the reported address); 0 picks
     * a default of 2^22.
     */
    uint64_t max_straight_run;
    /*
     * Instructions followed for one packet before the decoder gives up:
     * bounds the work hostile input (a format 0.0 branch count of up to
     * 2^32) can cause; 0 picks a default of 2^27.  A real trace needs
     * more only for a loop of that length whose branches were all
     * predicted.
     */
    uint64_t max_packet_walk;
    void *opaque;
} ETraceDecoderConfig;

typedef struct ETraceDecStats {
    uint64_t packets[4];        /* te_inst per format */
    uint64_t f3_subformats[4];  /* format 3 per subformat */
    uint64_t f0_subformats[2];  /* format 0 per subformat */
    uint64_t bytes;             /* consumed, padding included */
    uint64_t instructions;      /* reconstructed */
    uint64_t skipped;           /* packets ignored while not synchronised */
    uint64_t errors;
    uint64_t data_packets;      /* data trace packets */
} ETraceDecStats;

ETraceDecoder *etrace_decoder_new(const ETraceDecoderConfig *cfg);
void etrace_decoder_free(ETraceDecoder *d);

/*
 * Decode len more bytes of the stream.  A packet may be split across
 * calls.  Returns 0, or -1 if an error was found in these bytes (reported
 * through the ERROR event and etrace_decoder_error()); decoding goes on
 * from the next synchronisation packet.  A gap (the image ends where the
 * trace goes on) is no error.  After a framing error (bytes that
 * are not a packet) the decoder cannot find packet boundaries again and
 * ignores the rest of the stream.
 */
int etrace_decoder_feed(ETraceDecoder *d, const uint8_t *bytes, size_t len);

/*
 * End of the stream: an incomplete packet left over is an error.  Returns
 * 0 or -1 like etrace_decoder_feed().
 */
int etrace_decoder_finish(ETraceDecoder *d);

/* Decode one already unpacked packet (tests, other transports). */
int etrace_decoder_packet(ETraceDecoder *d, const ETracePacket *pkt);

/*
 * The first error seen: its message, the stream offset of the packet and
 * its number.  Returns NULL if there was none.
 */
const char *etrace_decoder_error(const ETraceDecoder *d, uint64_t *offset,
                                 uint64_t *packet);

void etrace_decoder_stats(const ETraceDecoder *d, ETraceDecStats *s);
/* The packet layout in force (the last support packet's). */
const ETraceOptions *etrace_decoder_options(const ETraceDecoder *d);

#endif /* RISCV_ETRACE_DECODER_H */
