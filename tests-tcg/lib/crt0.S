/*
 * rvtest start-up, trap entry points and mode switching (RV32 and RV64).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#if __riscv_xlen == 64
#define REG_S sd
#define REG_L ld
#define REGBYTES 8
#else
#define REG_S sw
#define REG_L lw
#define REGBYTES 4
#endif

#define FRAME_SIZE (32 * REGBYTES)
#define RV_MODE_S 1
#define RV_MODE_M 3
#define RV_MODE_VS 5

    .section .text.init, "ax"
    .globl _start
_start:
    /* Only hart 0 runs the test; the others wait forever. */
    csrr    t0, mhartid
    bnez    t0, park
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, rv_stack_top
    la      t0, rv_trap_entry_m
    csrw    mtvec, t0
    la      t0, rv_trap_stack_m_top
    csrw    mscratch, t0
    la      t0, __bss_start
    la      t1, __bss_end
1:  bgeu    t0, t1, 2f
    REG_S   zero, 0(t0)
    addi    t0, t0, REGBYTES
    j       1b
2:  la      t0, rv_boot_fdt       /* a1: the device tree from QEMU */
    REG_S   a1, 0(t0)
    call    rv_init
    call    main
    call    rv_finish
park:
    wfi
    j       park

/*
 * One trap entry per mode that can take traps.  xscratch holds the top of
 * that mode's trap stack while the mode is not handling a trap.  The frame
 * holds x1..x31 at index 1..31 (frame[2] is the interrupted sp); the C
 * handler may change it.
 */
.macro TRAP_ENTRY name, scratch, mode, xret
    .text
    .balign 4
    .globl \name
\name:
    csrrw   sp, \scratch, sp
    addi    sp, sp, -FRAME_SIZE
    .irp    n,1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    REG_S   x\n, (\n * REGBYTES)(sp)
    .endr
    csrr    t0, \scratch
    REG_S   t0, (2 * REGBYTES)(sp)
    mv      a0, sp
    li      a1, \mode
    call    rv_trap_handler
    .irp    n,1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31
    REG_L   x\n, (\n * REGBYTES)(sp)
    .endr
    addi    sp, sp, FRAME_SIZE
    csrrw   sp, \scratch, sp
    \xret
.endm

    TRAP_ENTRY rv_trap_entry_m, mscratch, RV_MODE_M, mret
    /* In VS mode sscratch/sret are vsscratch/VS's sret: same code. */
    TRAP_ENTRY rv_trap_entry_hs, sscratch, RV_MODE_S, sret
    TRAP_ENTRY rv_trap_entry_vs, sscratch, RV_MODE_VS, sret

/*
 * unsigned long rv_enter_mode(fn, arg, ctx, entry, spp): save the M-mode
 * context in ctx and mret (mstatus.MPP is set by the caller) to entry:
 * either the trampoline, which calls fn(arg) in the lower mode and
 * returns with an ecall (the trap handler then calls rv_leave_mode(ctx,
 * result)), or rv_hs_to_virt, which goes on to VS (spp=1) or VU (spp=0).
 */
    .text
    .globl rv_enter_mode
rv_enter_mode:
    REG_S   ra, (0 * REGBYTES)(a2)
    REG_S   sp, (1 * REGBYTES)(a2)
    .irp    n,0,1,2,3,4,5,6,7,8,9,10,11
    REG_S   s\n, ((\n + 2) * REGBYTES)(a2)
    .endr
    csrw    mepc, a3
    mv      a2, a4
    addi    sp, sp, -64
    mret

/*
 * In HS mode: enter VS or VU as a hypervisor does, with hstatus.SPV and
 * sret (QEMU 10.0 does not let M-mode software write mstatus.MPV).
 */
    .balign 4
    .globl rv_hs_to_virt
rv_hs_to_virt:
    li      t0, 0x80            /* hstatus.SPV */
    csrs    0x600, t0
    li      t0, 0x100           /* sstatus.SPP */
    csrc    sstatus, t0
    beqz    a2, 1f
    csrs    sstatus, t0
1:  la      t0, rv_mode_trampoline
    csrw    sepc, t0
    sret

/*
 * M to M through mret: clears a stale mstatus.MPV left by a trap from
 * V=1; MPIE is set to MIE first so that MIE is unchanged.
 */
    .globl rv_mret_to_m
rv_mret_to_m:
    csrr    t0, mstatus
    andi    t0, t0, 0x8         /* MIE */
    slli    t0, t0, 4           /* as MPIE */
    li      t1, 0x80
    csrc    mstatus, t1
    csrs    mstatus, t0
    li      t0, 0x1800          /* mstatus.MPP = M */
    csrs    mstatus, t0
    csrw    mepc, ra
    mret

    .balign 4
    .globl rv_mode_trampoline
rv_mode_trampoline:
    mv      t0, a0
    mv      a0, a1
    jalr    t0
    li      a7, 0x52565445      /* RV_ECALL_LEAVE_MODE, "RVTE" */
    ecall
1:  j       1b

    .globl rv_leave_mode
rv_leave_mode:
    la      t0, rv_trap_stack_m_top
    csrw    mscratch, t0
    REG_L   ra, (0 * REGBYTES)(a0)
    REG_L   sp, (1 * REGBYTES)(a0)
    .irp    n,0,1,2,3,4,5,6,7,8,9,10,11
    REG_L   s\n, ((\n + 2) * REGBYTES)(a0)
    .endr
    mv      a0, a1
    ret

/*
 * CSR access by number (rv_csr_read_num, rv_csr_write_num): one 8-byte
 * accessor per CSR number, "csrr a0, N; ret" and "csrw N, a0; ret",
 * assembled here so that every instruction the tests run is in the ELF
 * (a trace decoder follows them; no code is written at run time).  A CSR
 * access that traps resumes at the ret: the read returns a0 as called.
 */
    .text
    .option push
    .option norvc
    .balign 8
    .globl rv_csr_read_table
rv_csr_read_table:
    .set    csrno, 0
    .rept   4096
    csrr    a0, csrno
    ret
    .set    csrno, csrno + 1
    .endr
    .globl rv_csr_write_table
rv_csr_write_table:
    .set    csrno, 0
    .rept   4096
    csrw    csrno, a0
    ret
    .set    csrno, csrno + 1
    .endr
    .option pop

    .bss
    .balign 16
    .space  16384
    .globl rv_stack_top
rv_stack_top:
    .space  8192
    .globl rv_trap_stack_m_top
rv_trap_stack_m_top:
    .space  8192
    .globl rv_trap_stack_hs_top
rv_trap_stack_hs_top:
    .space  8192
    .globl rv_trap_stack_vs_top
rv_trap_stack_vs_top:
