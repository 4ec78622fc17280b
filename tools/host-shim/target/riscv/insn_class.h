/*
 * The codec files include the classifier by its path in the QEMU tree;
 * host and guest builds find it in the project's target-riscv/.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "../../../../target-riscv/insn_class.h"
