/*
 * Start-up of an S-mode payload under SBI firmware (OpenSBI fw_dynamic):
 * a0 is the hart id, a1 the device tree.  Traps are taken in S mode by
 * sbi_trap() (sbi_test.h), with the registers in a frame it may change.
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

    .section .text.init, "ax"
    .globl _start
_start:
    .option push
    .option norelax
    la      gp, __global_pointer$
    .option pop
    la      sp, stack_top
    la      t0, trap_entry
    csrw    stvec, t0
    la      t0, __bss_start
    la      t1, __bss_end
1:  bgeu    t0, t1, 2f
    REG_S   zero, 0(t0)
    addi    t0, t0, REGBYTES
    j       1b
2:  la      t0, rv_boot_fdt
    REG_S   a1, 0(t0)
    call    main
    call    rv_finish
3:  j       3b

    .balign 4
trap_entry:
    addi    sp, sp, -FRAME_SIZE
    .irp n, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, \
            19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
    REG_S   x\n, (\n * REGBYTES)(sp)
    .endr
    mv      a0, sp
    call    sbi_trap
    .irp n, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, \
            19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31
    REG_L   x\n, (\n * REGBYTES)(sp)
    .endr
    addi    sp, sp, FRAME_SIZE
    sret

    .bss
    .balign 16
    .space  16384
stack_top:
