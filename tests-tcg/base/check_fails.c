/*
 * A deliberately failing check: the runner must report the test failed
 * and name the check (tests-tcg/expect-fail.sh looks for its name).
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

int main(void)
{
    unsigned long two = csr_read(CSR_MISA) ? 2 : 0;

    rv_rule("deliberate failure");
    CHECK_EQ(two + two, 5);
    CHECK(two == 2);
    return 0;
}
