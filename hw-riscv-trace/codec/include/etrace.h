/*
 * E-trace codec: packets, encoder and decoder of RISC-V instruction trace
 *
 * A plain C library with no QEMU dependency beyond qemu/osdep.h (a stub in
 * host builds): the trace-encoder device runs the encoder inside QEMU, the
 * host decoder and the unit tests run the same code on the host.
 *
 * Reference: Efficient Trace for RISC-V v1.1.1 draft (the contract), with
 * the ratified 2.0 packet layout as a second selectable version.
 *
 * Copyright (c) 2026 The rvpa authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef RISCV_ETRACE_H
#define RISCV_ETRACE_H

#include "etrace-record.h"
#include "etrace-regs.h"

/*
 * ---------------------------------------------------------------- params
 *
 * Hardware parameters (chapter 9, table 9.1): fixed for one encoder
 * instance, discoverable by the decoder.  Widths are in bits; the *_size
 * fields are log2 of the number of entries (0 = not implemented).
 */
typedef enum ETraceArch {
    ETRACE_ARCH_1_1 = 0,    /* the v1.1.1 draft layout (arch_p = 0) */
    ETRACE_ARCH_2_0 = 1,    /* the ratified 2.0 layout */
} ETraceArch;

typedef struct ETraceParams {
    ETraceArch arch;
    unsigned iaddress_width_p;  /* XLEN: 32 or 64 */
    unsigned iaddress_lsb_p;    /* 1 with compressed instructions */
    unsigned ecause_width_p;
    unsigned privilege_width_p;
    unsigned context_width_p;   /* 0: nocontext_p = 1 */
    unsigned call_counter_size_p;
    unsigned return_stack_size_p;
    unsigned bpred_size_p;
    unsigned cache_size_p;
    unsigned f0s_width_p;       /* format 0 subformat width, 0 or 1 */
    bool sijump_p;
    unsigned src_bits;          /* encapsulation index field, 0..16 bits */
    unsigned src_id;            /* index value this encoder sends */
} ETraceParams;

/*
 * The privilege bits of a packed block's info (ETRACE_PB_PRIV_SHIFT) that
 * privilege_width_p keeps.
 */
static inline unsigned etrace_priv_mask(const ETraceParams *p)
{
    return (1u << (p->privilege_width_p < 3 ? p->privilege_width_p : 3)) - 1;
}

/*
 * Defaults used by QEMU's encoder for a hart of this XLEN (32 or 64):
 *   arch 1.1, iaddress_width_p = xlen, iaddress_lsb_p 1,
 *   ecause_width_p 6: every cause QEMU raises fits (exceptions 0..23,
 *     interrupts 0..63 with AIA; the interrupt bit travels separately),
 *   privilege_width_p 3: bits 1:0 = U 0, S/HS 1, M 3 and bit 2 = V, so
 *     VU = 4 and VS = 5 (values 2, 6 and 7 are reserved),
 *   context_width_p 0, call_counter_size_p 4 (counts 0..15),
 *   return_stack_size_p 4 (16 entries), bpred_size_p 6 (64 counters),
 *   cache_size_p 4 (16 targets), f0s_width_p 1 (both format 0
 *   subformats exist), sijump_p true, src_bits 0.
 */
void etrace_params_default(ETraceParams *p, unsigned xlen);

/*
 * Check that the parameters are in range and that every packet fits the
 * 31-byte payload limit.  Returns false with a static message in *err.
 */
bool etrace_params_check(const ETraceParams *p, const char **err);

/*
 * --------------------------------------------------------------- options
 *
 * Run-time modes (section 3.2), reported in the options field of every
 * support packet.  A mode whose hardware parameter is 0 is never on.
 */
typedef enum ETraceIRMode {
    ETRACE_IR_OFF = 0,
    ETRACE_IR_CALL_COUNTER = 1,     /* needs call_counter_size_p */
    ETRACE_IR_RETURN_STACK = 2,     /* needs return_stack_size_p */
} ETraceIRMode;

typedef enum ETraceSyncMode {
    ETRACE_SYNC_OFF = 0,
    ETRACE_SYNC_PACKETS = 1,        /* te_inst packets since the last sync */
    ETRACE_SYNC_CYCLES = 2,         /* cycles: one per retired instruction */
    ETRACE_SYNC_HALFWORDS = 3,      /* retired 16-bit instruction parcels */
} ETraceSyncMode;

typedef struct ETraceOptions {
    bool full_address;
    bool implicit_exception;
    bool sijump;
    ETraceIRMode implicit_return;
    bool branch_prediction;
    bool jump_target_cache;
    ETraceSyncMode sync_mode;
    unsigned sync_max;              /* period 2^(sync_max + 4) units */
    /* Data trace (chapter 7, etrace-data.h) */
    bool data;                      /* data packets are sent */
    bool data_no_address;           /* trTeDataNoAddr: data only */
    bool data_no_value;             /* trTeDataNoValue: addresses only */
    bool data_full_address;         /* trTeDataAddrCompress 0: all full */
    bool data_filtered;             /* trTeDataFilters: not every access */
} ETraceOptions;

/* Whether the resync counts instructions or half-words (see runs). */
static inline bool etrace_options_count_units(const ETraceOptions *o)
{
    return o->sync_mode == ETRACE_SYNC_CYCLES ||
           o->sync_mode == ETRACE_SYNC_HALFWORDS;
}

/*
 * The options field of the support packet (section 6.5), one bit per
 * mode the decoder must know about (resync settings are not sent):
 *
 *   bit  field               values
 *   0    full_address        1: addresses are absolute (3.2.2)
 *   1    implicit_exception  1: format 3 subformat 1 omits the address
 *   2    sijump              1: sequentially inferable jumps are inferred
 *   4:3  implicit_return     0 off, 1 call counter, 2 return stack, 3 rsvd
 *   5    branch_prediction   1: format 0 subformat 0 may be used (3.2.6)
 *   6    jump_target_cache   1: format 0 subformat 1 may be used (3.2.7)
 *   7    data                1: data trace packets are sent (chapter 7)
 *   8    data_no_address     1: data packets carry no address
 *   9    data_no_value       1: data packets carry no data
 *   10   data_full_address   1: every data packet is full (diff 0)
 *   11   data_filtered       1: data filters leave accesses out
 *
 * The encoder_mode field is 1 bit wide (0: branch trace).  In the 2.0
 * layout, denable repeats bit 7 and dloss is set with trace_lost while
 * data trace is on.
 */
#define ETRACE_OPTIONS_WIDTH        12
#define ETRACE_ENCODER_MODE_WIDTH   1

/*
 * --------------------------------------------------------------- packets
 *
 * One te_inst / te_support payload, unpacked.  Fields that a format does
 * not carry are ignored when packing and zero after unpacking.  Booleans
 * that the spec defines relative to the bit sent before them (notify,
 * updiscon, irreport, and irdepth) are stored as the raw bits on the wire:
 * etrace_packet_set_flags() and etrace_packet_get_flags() convert.
 *
 * Addresses are byte values modulo 2^iaddress_width_p (not shifted): the
 * full address of format 3 and of full-address mode, or the difference
 * from the previously reported address (3.2.1).  Bits below
 * iaddress_lsb_p are not sent.  tvalepc is the 1.1 tvalepc field or the
 * 2.0 tval field.
 *
 * Which field decides the layout:
 *   format 1: branches 0 = 31-bit map and no address, else the map is
 *             1, 3, 7, 15 or 31 bits (tables 6.6, 6.7) and an address
 *             follows;
 *   format 0 subformat 0: branch_fmt 0 = no address, 2 or 3 = address
 *             (1 is reserved);
 *   format 0 subformat 1: branches 0 = no map;
 *   format 3 subformat 1: the address is omitted in implicit exception
 *             mode (2.0: only when thaddr is 1); 2.0 omits tval for
 *             interrupts.
 * has_address is an output of unpack (true when the packet carries or, in
 * implicit exception mode, implies an instruction address).
 *
 * Layout of arch 2.0 (ratified Efficient Trace 2.0, chapter 7) where it
 * differs from 1.1.1: format 3 subformat 1 has thaddr after interrupt and
 * tval instead of tvalepc (omitted for interrupts); the support packet
 * ends with denable (1 bit), dloss (1 bit) and doptions (0 bits), all
 * sent as 0; the time fields are absent (notime_p = 1) as in 1.1.
 */
typedef enum ETraceQualStatus {
    ETRACE_QUAL_NO_CHANGE = 0,
    ETRACE_QUAL_ENDED_REP = 1,
    ETRACE_QUAL_TRACE_LOST = 2,
    ETRACE_QUAL_ENDED_UPD = 3,
} ETraceQualStatus;

/*
 * One data packet's fields as sent (etrace-packet.c walks the layouts).
 * address: the byte address or difference, shifted right by size in the
 * aligned formats; csr: the 12-bit address of a CSR packet.
 */
typedef struct ETraceDataPacket {
    unsigned format;
    unsigned subtype;
    unsigned size;
    unsigned diff;
    unsigned data_len;      /* bytes - 1 */
    unsigned op_len;
    uint64_t data;
    uint64_t operand;
    uint64_t address;
    unsigned csr;
} ETraceDataPacket;

typedef struct ETracePacket {
    unsigned format;        /* 0..3 */
    unsigned subformat;     /* formats 0 and 3 */

    /* format 3 subformats 0..2 */
    bool branch;
    unsigned privilege;
    uint64_t context;
    uint64_t ecause;
    bool interrupt;
    bool thaddr;            /* arch 2.0 only */
    uint64_t tvalepc;

    /* A data packet (flow 3, etrace-data.h): dp; the other fields are 0 */
    bool data;
    ETraceDataPacket dp;

    /* format 3 subformat 3 (support) */
    bool enable;
    unsigned encoder_mode;
    ETraceQualStatus qual_status;
    uint32_t options;

    /* formats 0, 1 and 2 */
    uint64_t address;       /* full (f3) or differential/full (f0..2) */
    bool notify;
    bool updiscon;
    bool irreport;
    uint32_t irdepth;
    unsigned branches;      /* format 1: valid bits in branch_map */
    uint32_t branch_map;    /* bit 0 = oldest branch; 1 = not taken */
    uint32_t branch_count;  /* format 0 subformat 0 */
    unsigned branch_fmt;    /* format 0 subformat 0 */
    uint32_t index;         /* format 0 subformat 1: jump target cache */
    bool has_address;       /* format 0/1: packet carries an address */

    /* encapsulation (unpack only) */
    unsigned src_id;        /* index field of the header */
    bool padding;           /* only zero padding bytes were consumed */
} ETracePacket;

/* Largest encapsulated packet: header, index and a 31-byte payload. */
#define ETRACE_MAX_PACKET 34
#define ETRACE_MAX_PAYLOAD 31

/*
 * Pack pkt into its sign-compressed payload (the whole packet: identical
 * most significant bits are dropped and the rest is sign-extended to whole
 * bytes, at least one byte) and the example encapsulation of chapter 6
 * (figure 6.1): a header byte with the payload length in bits 4:0, flow 0
 * in bits 6:5 and no timestamp (bit 7 = 0), then p->src_id in
 * DIV_ROUND_UP(p->src_bits, 8) bytes, least significant byte first, then
 * the payload.  Field values are truncated to their widths.  o holds the
 * run-time options (NULL: all off).  Returns the number of bytes written
 * to buf, or 0 if the parameters are invalid.
 */
size_t etrace_packet_pack(const ETraceParams *p, const ETraceOptions *o,
                          const ETracePacket *pkt,
                          uint8_t buf[ETRACE_MAX_PACKET]);

/*
 * Unpack one encapsulated packet from buf[0..len), in the layout the
 * options o select (the options of the last support packet; NULL: all
 * off).  Returns the bytes it used (> 0), 0 if buf holds only part of a
 * packet, or -1 if the bytes are not a valid packet (then *err names
 * what is wrong).  A run of zero bytes where a header is expected is
 * padding: it is consumed whole and reported with pkt->padding set.  A
 * header with the timestamp bit set is accepted and its 2-byte timestamp
 * skipped.  Rejected: a payload longer than the packet's fields, padding
 * bits that are not the sign extension, reserved values (format 0
 * subformat/branch_fmt, encoder_mode, option bits, privilege 2, 6, 7).
 */
int etrace_packet_unpack(const ETraceParams *p, const ETraceOptions *o,
                         const uint8_t *buf, size_t len, ETracePacket *pkt,
                         const char **err);

/*
 * The encapsulation (chapter 6's example): a header byte with the payload
 * length in bits 4:0 and in bit 7 a timestamp flag (2 bytes follow), then
 * the source index (src_bits, in whole bytes, little-endian), then the
 * payload.  A zero byte where a header is due is padding.
 *
 * etrace_frame_length: the bytes of the frame whose header is this, 1 for
 * padding, 0 for an invalid header (payload length 0).
 * etrace_frame_source: the source index of a whole frame.
 */
unsigned etrace_frame_length(const ETraceParams *p, uint8_t header);
unsigned etrace_frame_source(const ETraceParams *p, const uint8_t *frame);
/*
 * The first packet boundary of buf[0..len), a stream that may start inside
 * a packet: frames it from each of the first ETRACE_FRAME_CANDIDATES
 * offsets, dropping the framings that meet bytes that are no valid packet
 * in the layout of o; where all the others meet, or where the last one
 * left unpacks a packet, is a boundary of the true one.  Returns the
 * offset, or -1 if there is none in buf.
 */
#define ETRACE_FRAME_CANDIDATES 40      /* > ETRACE_MAX_PACKET */
long etrace_frame_boundary(const ETraceParams *p, const ETraceOptions *o,
                           const uint8_t *buf, size_t len);

/*
 * Formats 1 and 2 at encoder speed: etrace_packer_init() derives the
 * constants from the parameters once (false if they are invalid), then
 * etrace_packet_pack_f12() writes the bytes etrace_packet_pack() would
 * write for the packet { format, branches, branch_map, address } after
 * etrace_packet_set_flags(notify, updiscon, irreport, irdepth).  The
 * payload is built in two 64-bit words and compressed with one count of
 * leading sign bits; parameters whose longest format 1 does not fit 127
 * bits take the generic packer.
 */
typedef struct ETracePacker {
    ETraceParams p;
    uint64_t addr_mask;         /* iaddress_width_p bits */
    uint8_t addr_bits;          /* iaddress_width_p - iaddress_lsb_p */
    uint8_t irdepth_width;
    uint8_t header;             /* header and index bytes */
    uint8_t field_shift;        /* address << shift >> sext (signed): */
    uint8_t field_sext;         /* its sign-extended address field */
    bool fast;                  /* the two-word packer applies */
} ETracePacker;

bool etrace_packer_init(ETracePacker *pk, const ETraceParams *p);
size_t etrace_packet_pack_f12(const ETracePacker *pk, unsigned format,
                              unsigned branches, uint32_t branch_map,
                              uint64_t address, bool notify, bool updiscon,
                              bool irreport, uint32_t irdepth,
                              uint8_t buf[ETRACE_MAX_PACKET]);
/*
 * Format 0 subformat 1 (a jump target cache hit) likewise: the bytes
 * etrace_packet_pack() writes for { format 0, subformat 1, index,
 * branches, branch_map } after etrace_packet_set_flags(false, false,
 * irreport, irdepth), with options o (the subformat is implied by them
 * when f0s_width_p is 0).
 */
size_t etrace_packet_pack_f01(const ETracePacker *pk, const ETraceOptions *o,
                              unsigned index, unsigned branches,
                              uint32_t branch_map, bool irreport,
                              uint32_t irdepth,
                              uint8_t buf[ETRACE_MAX_PACKET]);

/*
 * Format 0 subformat 0 likewise: the bytes etrace_packet_pack() writes
 * for { format 0, subformat 0, branch_count, branch_fmt 0 }.
 */
size_t etrace_packet_pack_f00(const ETracePacker *pk, const ETraceOptions *o,
                              uint32_t branch_count,
                              uint8_t buf[ETRACE_MAX_PACKET]);

/*
 * Set notify, updiscon, irreport and irdepth from their meanings (6.6):
 * notify = this address is reported because of trigger[2], updiscon =
 * the instruction follows an uninferable discontinuity and a format 3
 * comes next, irreport = irdepth is valid (return stack misprediction or
 * depth report, 6.6.3).  The address (formats 0/2, 1 with address) or
 * branch fields (format 0 subformat 1) must already be set.
 */
void etrace_packet_set_flags(const ETraceParams *p, ETracePacket *pkt,
                             bool notify, bool updiscon, bool irreport,
                             uint32_t irdepth);
/* The meanings back from the raw bits (false for formats without them). */
void etrace_packet_get_flags(const ETraceParams *p, const ETracePacket *pkt,
                             bool *notify, bool *updiscon, bool *irreport);

/* Width of the irdepth field (6.6 table 6.5). */
unsigned etrace_irdepth_width(const ETraceParams *p);

/*
 * Options field of a support packet, and back.  Modes whose hardware
 * parameter is 0 are dropped; sync_mode and sync_max are not sent.
 */
uint32_t etrace_options_pack(const ETraceParams *p, const ETraceOptions *o);
void etrace_options_unpack(const ETraceParams *p, uint32_t bits,
                           ETraceOptions *o);

/*
 * The modes a Trace Control Interface trTeInstFeatures value selects
 * (docs/rvtrace.rst): bits 0-5 full address, implicit exception,
 * sequentially inferable jumps, implicit return, branch prediction, jump
 * target cache, and bits 7:6 the implicit return mode (1: call counter,
 * otherwise the return stack).  The resync settings are left alone.
 */
void etrace_options_from_features(uint32_t features, ETraceOptions *o);

/*
 * The encoder's discovery registers 0xE00 (d0) and 0xE04 (d1), layout in
 * docs/rvtrace.rst: the device writes its parameters out, guests and the
 * decoder read them back (the other fields get etrace_params_default()).
 */
void etrace_params_to_discovery(const ETraceParams *p, uint32_t *d0,
                                uint32_t *d1);
void etrace_params_from_discovery(ETraceParams *p, uint32_t d0, uint32_t d1);

/*
 * ----------------------------------------------------------------- blocks
 *
 * One retirement block on the instruction trace interface (chapter 4.2):
 * iretire half-words of straight-line instructions from iaddr, the last
 * of them 2 << ilastsize bytes long and of type itype.  itype 1 or 2
 * (exception, interrupt) means the trap happened after the last retired
 * instruction; iretire may then be 0.
 *
 * Blocks as QEMU produces them:
 * - A block ends at every control transfer (itype 3..15 describe its last
 *   instruction) or anywhere else with itype 0.  priv and context are
 *   those the block's instructions ran with; ctype applies to the first
 *   instruction of the block (the first after the context change).
 * - A trap is an itype 1/2 block, normally with iretire 0, after the
 *   block that ends at the last instruction retired before it: ecall,
 *   ebreak and c.ebreak retire (they end their block, as the decoder
 *   algorithm's is_uninferable_discon has them); a faulting instruction
 *   does not retire.  The
 *   next block starts at the trap handler.  With iretire > 0 the block's
 *   instructions are ordinary ones (none is a control transfer) and the
 *   trap follows its last one.  Two trap blocks in a row: the handler of
 *   the first trapped before retiring anything.
 * - cause is the cause code without the interrupt bit, tval the trap
 *   value, epc the xepc the trap wrote.  The qualified flag of a trap
 *   block is ignored: the trap belongs to the next traced instruction.
 * - Blocks with iretire 0 and itype 0 are ignored.
 * - sijump may only be set on a block whose last instruction is a jalr
 *   (itype 6, 8, 10, 12, 13, 14) whose rs1 was written by the lui, auipc
 *   or c.lui retired just before it (4.1.1).
 * - notify (trigger[2]) asks for the block's last instruction to be
 *   reported.
 * - A run (run > 0, at most 63) stands for that many blocks, each ending
 *   with a conditional branch, whose addresses the producer left out:
 *   bit i of run_map is 1 when the i-th of them (oldest first) was not
 *   taken, iretire and ninsns are their totals, priv and context theirs;
 *   the other fields but qualified are ignored.  The totals may be 0
 *   unless the encoder counts them (etrace_options_count_units()): then
 *   a run without them is a loss.  The producer promises
 *   that a run follows a traced block (or run) of its privilege whose
 *   last instruction needs no successor's address (neither a trap nor
 *   itype 3, 6, 8, 10, 12, 13 or 14), that the block after it is a
 *   traced block of that privilege with an address (the last of the
 *   branch blocks) or another such run, and that with branch
 *   prediction on the run is indexed: run_indexed, at most
 *   ETRACE_RUN_INDEXED_MAX branches and in run_entries their predictor
 *   entries (etrace-record.h's layout, valid during the call; 3.2.6
 *   needs nothing else of a branch's address), on an encoder whose
 *   predictor they fit (etrace_run_indexes_fit()).  A
 *   run that breaks these rules is a loss (see lost()), and so is an
 *   indexed one that comes while ETRACE_RUN_INDEXED_MAX + 1 or fewer
 *   branches are left before the count of predicted branches is full
 *   (the branch that fills it is reported with its address: once in
 *   2^32 predicted branches).  At the start of tracing and after a loss,
 *   runs are skipped until a block brings an address.  A run for
 *   N-trace's BTM is counted instead (run_counted, run_entries its
 *   counts: etrace-record.h), which E-trace ignores.
 */
typedef struct ETraceBlock {
    uint64_t iaddr;
    uint32_t iretire;       /* half-words */
    uint32_t ninsns;        /* instructions (cycles sync mode, statistics) */
    uint8_t ilastsize;      /* 0: 2 bytes, 1: 4 bytes */
    uint8_t itype;          /* RISCVIType */
    uint8_t priv;           /* privilege of the retired instructions */
    bool sijump;            /* itype 8/10/14 that is sequentially inferable */
    bool notify;            /* trigger[2]: report the last instruction */
    bool qualified;         /* passes the filters (ETraceFilter) */
    uint8_t ctype;          /* context report type, table 4.4 */
    uint8_t run;            /* > 0: a run of this many branch blocks */
    uint64_t context;
    uint64_t cause;         /* itype 1 and 2 only */
    uint64_t tval;          /* itype 1 and 2 only */
    uint64_t epc;           /* itype 1 and 2 only */
    uint64_t run_map;       /* runs only: 1 = not taken, oldest in bit 0 */
    /* indexed: the predictor entries of its branches, oldest first */
    const uint8_t *run_entries;
    bool run_indexed;
    bool run_counted;       /* run_entries holds counts instead */
} ETraceBlock;

/*
 * ---------------------------------------------------------------- encoder
 *
 * The instruction-delta algorithm of chapter 8 (figure 8.1) on blocks
 * (section 8.3).  Packets leave through emit(), already encapsulated.
 * The choices a decoder must mirror:
 *
 * - Uninferable discontinuities (updiscon): itype 3, 6, 8, 10, 12, 13,
 *   14, except a jalr with sijump in sijump mode (then inferable, unless
 *   the jalr itself was reported by a format 3 packet: the decoder did
 *   not see its lui/auipc) and an implicit return.
 * - Implicit return: itype 8 and 9 push (address + length of the call),
 *   also when the call itself is reported; itype 13 pops when the depth
 *   is not 0 and, with the return stack, the target is the top entry;
 *   a return stack miss does not pop and is reported on the target's
 *   packet with irreport and irdepth = the depth.  itype 12 never
 *   touches the stack.  Depth limits: 2^return_stack_size_p entries
 *   (the oldest is overwritten), 2^call_counter_size_p - 1 calls (the
 *   counter saturates).  Format 3.0 and 3.1 reset the depth to 0 before
 *   their own instruction's push.
 * - Depth reports (6.6.3) on packets reporting the last instruction
 *   before a format 3 or the end of tracing, when the address is not an
 *   updiscon target: after an implicit return if the depth is not 0,
 *   else if there was an implicit return since the last call and no
 *   branch since that return.
 * - Branch predictor: index (address >> iaddress_lsb_p) mod
 *   2^bpred_size_p; every entry is 01 after each format 3.0/3.1 (a
 *   branch reported by the format 3 itself leaves no trace in it).
 * - Jump target cache: direct mapped, index (address >> iaddress_lsb_p)
 *   mod 2^cache_size_p, cleared by format 3.0/3.1; every updiscon target
 *   reported by a format 0/1/2 is looked up and then stored.  A hit is
 *   sent as format 0.1 unless the updiscon bit is needed (a format 3
 *   follows), then as format 1/2.
 * - Reference of differential addresses: the instruction reported by the
 *   last format 3.0, 3.1 (even when the address is omitted), 2, 1 with
 *   address, 0.0 with address or 0.1.  2.0 format 3.1 with thaddr 0
 *   (EPC) is not a reference.
 * - Traps: the last instruction before a trap is always reported
 *   (format 0/1/2), then format 3.1 at the first handler instruction.
 *   1.1: a second trap before the handler retires replaces the first
 *   (only the last cause is sent).  2.0: the earlier trap is sent with
 *   thaddr 0 (address = its EPC) first; a trap at the target of an
 *   updiscon is sent at once with thaddr 0 and address = EPC, and the
 *   handler then gets a format 3.0.
 * - Context (context_width_p > 0): ctype 1 sends format 3.2 at the first
 *   instruction without another packet; ctype 2 is a privilege change;
 *   ctype 3 reports the previous instruction like a trap, then format 3.0.
 * - Resync: the counter counts te_inst packets (support packets not
 *   included), instructions (ninsns) or half-words (iretire) of traced
 *   blocks, and is checked at the last instruction of each block whose
 *   address and whose successor's address are known (not in a run): when
 *   it reached 2^(sync_max + 4), pending branches are reported there and
 *   the next block's first instruction gets format 3.0.  (8.2 leaves the
 *   moment open; a producer of runs gives the encoder such a pair at
 *   least every 63 branches, 66 with branch prediction.)  Exception:
 *   when that last instruction is an updiscon, it is not reported and
 *   its target is not synced (a decoder following the code to a format
 *   3 address stops at its first occurrence); the target is reported by
 *   format 0/1/2 with the updiscon bit (and irreport after a return
 *   stack miss) and the next instruction gets format 3.0 (with a
 *   block_done function or a sync hook, the next block's first
 *   instruction, so that no block's data packets come after a sync of
 *   an instruction later in it).
 * - After a jump target reported without the updiscon bit, a privilege or
 *   precise context change or a resync reports the instruction before
 *   the format 3.0 (so that a format 3 never confirms a stop the decoder
 *   made at an earlier occurrence of that target, 6.6.2 case 3).
 * - Qualification: the last qualified instruction is reported, then a
 *   support packet (enable 1, ended_upd when that report was an updiscon
 *   target, else ended_rep); the next qualified instruction is synced.
 * - lost(): pending state is dropped; a trace_lost support packet goes out
 *   in front of the next packet, and the next instruction is synced.
 */
/*
 * A packet of len bytes at bytes, which points to ETRACE_MAX_PACKET
 * readable bytes: a callee may copy a fixed amount and keep len of it.
 */
typedef void ETraceEmitFn(void *opaque, const uint8_t *bytes, size_t len);

/*
 * Room in the caller's output that an encoder may write its commonest
 * packets to directly, instead of calling emit: bytes [pos, end), pos
 * moving past each packet written.  The caller owns it: it opens it
 * before feeding blocks, takes the bytes below pos before anything else
 * is written after them (its emit callback first of all, which may then
 * move the window), and empties it (pos == end) whenever packets must go
 * through emit.  An encoder writes a packet there only if end - pos is
 * at least the most it may store (ETRACE_MAX_PACKET, NTRACE_MAX_MESSAGE).
 */
typedef struct ETraceWindow {
    uint8_t *pos;
    uint8_t *end;
} ETraceWindow;

/* Room in window w (NULL: none) for a packet of up to n stored bytes */
static inline bool etrace_window_room(const ETraceWindow *w, size_t n)
{
    return w && (size_t)(w->end - w->pos) >= n;
}

/* Copy a packet of n bytes into window w if it has room; else false. */
static inline bool etrace_window_put(ETraceWindow *w, const uint8_t *bytes,
                                     size_t n)
{
    if (!etrace_window_room(w, n)) {
        return false;
    }
    memcpy(w->pos, bytes, n);
    w->pos += n;
    return true;
}

typedef struct ETraceEncoder ETraceEncoder;

ETraceEncoder *etrace_encoder_new(const ETraceParams *p,
                                  ETraceEmitFn *emit, void *opaque);
void etrace_encoder_free(ETraceEncoder *e);

/* Start tracing with these options: support packet, then a sync. */
void etrace_encoder_start(ETraceEncoder *e, const ETraceOptions *o);
/* Feed one block; packets may be emitted. */
void etrace_encoder_block(ETraceEncoder *e, const ETraceBlock *b);

/*
 * Feed packed blocks, all of this context, the first of them with ctype
 * first_ctype (the others 0): the same as etrace_encoder_block() on each
 * of their unpacked forms, faster.  Takes the entries pb[0..n) up to, not
 * including, the first block after pb[0] whose info has a bit of
 * stop_mask set (the producer's bits for records it handles itself), or
 * a trap whose second entry is not before pb[n]; returns how many
 * entries it took (0 when pb[0] is such a trap).
 */
size_t etrace_encoder_packed(ETraceEncoder *e, const ETracePackedBlock *pb,
                             size_t n, uint64_t context, unsigned first_ctype,
                             uint64_t stop_mask);
/*
 * That unpacked form of pb[0] (and of pb[1] for a trap): addresses and
 * tval cut to iaddress_width_p bits.
 */
void etrace_packed_to_block(const ETraceParams *p,
                            const ETracePackedBlock *pb, uint64_t context,
                            unsigned ctype, ETraceBlock *b);
/* End of trace: report the last instruction, then a support packet. */
void etrace_encoder_stop(ETraceEncoder *e);
/*
 * The sink dropped packets: the next packets are a support packet with
 * qual_status trace_lost, then a sync.
 */
void etrace_encoder_lost(ETraceEncoder *e);

/*
 * Data trace (etrace-data.h): fn is called each time the last instruction
 * of a block fed by etrace_encoder_block() was evaluated, with that block
 * (iaddr and iretire as fed): the packets that report its instructions
 * are out, none of those after it.  The data packets of the block's
 * accesses go out there, so that they follow the instruction packets of
 * their instructions and precede any sync of a later one.  Blocks that
 * are not traced (not qualified, dropped by lost()) get no call.
 * etrace_encoder_packed() calls it as etrace_encoder_block() would; it
 * then takes the blocks one at a time (no quiet runs).
 */
typedef void ETraceBlockDoneFn(void *opaque, const ETraceBlock *b);
void etrace_encoder_set_block_done(ETraceEncoder *e, ETraceBlockDoneFn *fn,
                                   void *opaque);

/*
 * Data trace without a block_done function: fn is called before each
 * format 3 packet that reports an instruction (a sync or a trap), with
 * the index of that instruction's block among the entries of the current
 * etrace_encoder_packed() call (for etrace_encoder_block(), 0 is its
 * block, which counts as a trap's two entries would), or -1 for the last
 * block of an earlier call.  A 2.0 trap sent before its handler (thaddr
 * 0) reports the instruction after the trap's entries: the index of the
 * entry after them.  Such a packet comes from the call that takes the
 * block it reports, from the next call for the last block of a call, or
 * from etrace_encoder_stop() or a restarting etrace_encoder_start() for
 * the last block given (-1 there; their ending support packet gets a
 * call with 0, after every block given).  So the accesses of the blocks
 * before the index go out before the packet, those of the others after
 * it, and a decoder that starts at the packet (a wrapped buffer, a gap)
 * pairs them right.  Like a block_done function, it keeps periodic syncs
 * on the first instruction of a block.
 */
typedef void ETraceSyncHookFn(void *opaque, long first_after);
void etrace_encoder_set_sync_hook(ETraceEncoder *e, ETraceSyncHookFn *fn,
                                  void *opaque);

/* Counters for benchmarks and tools. */
typedef struct ETraceStats {
    uint64_t packets[4];    /* per format */
    uint64_t bytes;
    uint64_t halfwords;     /* traced instruction half-words */
    uint64_t instructions;
} ETraceStats;
void etrace_encoder_stats(const ETraceEncoder *e, ETraceStats *s);
/* Its packets[format] alone */
uint64_t etrace_encoder_packets(const ETraceEncoder *e, unsigned format);

/*
 * For tests: false sends every block through the general algorithm and
 * every packet through etrace_packet_pack(); true (the default) lets the
 * fast paths take the blocks and packets they apply to.  The bytes are
 * the same.
 */
void etrace_encoder_set_fast_paths(ETraceEncoder *e, bool on);

/* The output window (ETraceWindow) for its packets, or NULL: none. */
void etrace_encoder_set_window(ETraceEncoder *e, ETraceWindow *w);

/*
 * The branch predictor, jump target cache and call stack the encoder and
 * decoder keep identically: etrace-model.h.
 */

/*
 * v, least significant byte first, in one store (packers of E-trace and
 * N-trace): the sinks' word loads of a packet then forward from it
 * instead of waiting for byte stores to reach the cache.
 */
static inline __attribute__((always_inline))
void etrace_store_le64(uint8_t *dst, uint64_t v)
{
    const uint16_t one = 1;
    uint8_t first;

    memcpy(&first, &one, 1);        /* a constant for the compiler */
    if (first != 1) {
        v = __builtin_bswap64(v);
    }
    memcpy(dst, &v, sizeof(v));
}

/*
 * Format 1's branch_map width for 1-31 branches: 1, 3, 7, 15, 31 (6.6);
 * 0 (a full map, 31) is not for here.
 */
static inline unsigned etrace_f1_map_width(unsigned branches)
{
    return (2u << (31 - __builtin_clz(branches))) - 1;
}

/*
 * A packet whose payload compresses to bits bits and whose sign
 * extension is lo, then hi, encapsulated into buf (ETracePacker): the
 * header and index, then the payload.  Of the 16 payload bytes written,
 * the ones past the packet's end are not part of it.  Returns the
 * packet's length.
 */
static inline __attribute__((always_inline))
size_t etrace_packer_put(const ETracePacker *pk, unsigned bits, uint64_t lo,
                         uint64_t hi, uint8_t buf[ETRACE_MAX_PACKET])
{
    unsigned bytes = (bits + 7) / 8, header = pk->header;
    unsigned shift = header * 8;    /* 8, 16 or 24 */
    /* flow 0, no timestamp; the source ID fits the header's other bytes */
    uint64_t head = bytes | (uint64_t)pk->p.src_id << 8;

    /*
     * Whole words at word offsets: a reader's 8-byte loads then take
     * their bytes from one store each, which a load that spans several
     * narrower stores can not (it waits for them to reach the cache).
     */
    etrace_store_le64(buf, head | lo << shift);
    etrace_store_le64(buf + 8, lo >> (64 - shift) | hi << shift);
    etrace_store_le64(buf + 16, hi >> (64 - shift));
    return header + bytes;
}

/*
 * The commonest packets of etrace_packet_pack_f12(), inline for the
 * encoder's fast paths: format 2, or format 1 with 1 to 31 branches,
 * with notify, updiscon and irreport all false.  Each flag is then sent
 * as a copy of the bit before it (6.6) and irdepth as copies of the last
 * flag, so everything after the address is the sign extension of its
 * top bit, which compression drops: the payload is the head (format,
 * branches and map: h bits, 2 <= h <= 38) and the address field,
 * sign-extended.  Returns 0 for other packets, or a packer without the
 * two-word path: etrace_packet_pack_f12() writes those.
 */
static inline __attribute__((always_inline))
size_t etrace_packet_pack_f12_plain(const ETracePacker *pk, unsigned format,
                                    unsigned branches, uint32_t branch_map,
                                    uint64_t address,
                                    uint8_t buf[ETRACE_MAX_PACKET])
{
    uint64_t head, sign, above, below;
    int64_t field;
    unsigned h, top;

    if (!pk->fast || (format == 1 ? branches - 1 > 30 : format != 2)) {
        return 0;
    }
    if (format == 2) {
        head = 2;
        h = 2;
    } else {
        h = etrace_f1_map_width(branches);
        head = 1 | branches << 2 |
               (uint64_t)(branch_map & (uint32_t)((UINT64_C(1) << h) - 1))
               << 7;
        h += 7;
    }
    field = (int64_t)(address << pk->field_shift) >> pk->field_sext;
    sign = field >> 63;             /* 0 or all ones */
    above = field ^ sign;           /* the field's bits that differ */
    below = head ^ sign;            /* never 0 in the format bits */
    top = above ? h + 63u - __builtin_clzll(above) :
                  63u - __builtin_clzll(below & ((UINT64_C(1) << h) - 1));
    return etrace_packer_put(pk, top + 2, head | (uint64_t)field << h,
                             field >> (64 - h), buf);
}

#endif /* RISCV_ETRACE_H */
