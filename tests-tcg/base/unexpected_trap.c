/*
 * A trap nobody expected must end the test as failed, with its cause.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

int main(void)
{
    asm volatile(".word 0");    /* an illegal instruction */
    rv_puts("not reached\n");
    return 0;
}
