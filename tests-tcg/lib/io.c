/*
 * rvtest: UART output, printf, checks and the verdict.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "rvtest.h"

#define UART_BASE       0x10000000UL    /* ns16550a of virt */
#define UART_THR        0
#define UART_LSR        5
#define UART_LSR_THRE   0x20
#define FINISHER_BASE   0x100000UL      /* sifive_test of virt */
#define FINISHER_PASS   0x5555
#define FINISHER_FAIL   0x3333

unsigned rv_checks_run, rv_checks_failed;
static const char *current_rule = "";

void rv_putc(char c)
{
    volatile uint8_t *uart = (volatile uint8_t *)UART_BASE;

    while (!(uart[UART_LSR] & UART_LSR_THRE)) {
        /* wait for the transmitter */
    }
    uart[UART_THR] = c;
}

void rv_puts(const char *s)
{
    while (*s) {
        rv_putc(*s++);
    }
}

static int put_unsigned(unsigned long long v, unsigned base, int width,
                        char pad)
{
    char buf[24];
    int n = 0, len;

    do {
        buf[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    len = n;
    while (width-- > len) {
        rv_putc(pad);
        len++;
    }
    while (n) {
        rv_putc(buf[--n]);
    }
    return len;
}

int rv_vprintf(const char *fmt, va_list ap)
{
    int count = 0;

    for (; *fmt; fmt++) {
        int longs = 0, width = 0;
        bool left = false;
        char pad = ' ';
        unsigned long long u;
        long long s;

        if (*fmt != '%') {
            rv_putc(*fmt);
            count++;
            continue;
        }
        fmt++;
        if (*fmt == '-') {
            left = true;
            fmt++;
        }
        if (*fmt == '0') {
            pad = '0';
            fmt++;
        }
        while (*fmt >= '0' && *fmt <= '9') {
            width = width * 10 + (*fmt++ - '0');
        }
        while (*fmt == 'l') {
            longs++;
            fmt++;
        }
        switch (*fmt) {
        case 'd':
        case 'i':
            s = longs >= 2 ? va_arg(ap, long long) :
                longs ? va_arg(ap, long) : va_arg(ap, int);
            if (s < 0) {
                rv_putc('-');
                count++;
                u = -(unsigned long long)s;
            } else {
                u = s;
            }
            count += put_unsigned(u, 10, width, pad);
            break;
        case 'u':
        case 'x':
            u = longs >= 2 ? va_arg(ap, unsigned long long) :
                longs ? va_arg(ap, unsigned long) : va_arg(ap, unsigned);
            count += put_unsigned(u, *fmt == 'u' ? 10 : 16, width, pad);
            break;
        case 'p':
            rv_puts("0x");
            count += 2 + put_unsigned((uintptr_t)va_arg(ap, void *), 16,
                                      width, pad);
            break;
        case 'c':
            rv_putc((char)va_arg(ap, int));
            count++;
            break;
        case 's': {
            const char *str = va_arg(ap, const char *);
            int len;

            str = str ? str : "(null)";
            len = strlen(str);
            for (; !left && width > len; width--, count++) {
                rv_putc(' ');
            }
            rv_puts(str);
            count += len;
            for (; left && width > len; width--, count++) {
                rv_putc(' ');
            }
            break;
        }
        case '%':
            rv_putc('%');
            count++;
            break;
        default:
            rv_puts("<bad format>");
            return count;
        }
    }
    return count;
}

int rv_printf(const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = rv_vprintf(fmt, ap);
    va_end(ap);
    return n;
}

void rv_exit(int code)
{
    volatile uint32_t *finisher = (volatile uint32_t *)FINISHER_BASE;

    *finisher = code ? ((uint32_t)code << 16) | FINISHER_FAIL : FINISHER_PASS;
    for (;;) {
        asm volatile("wfi");
    }
}

/* Called by crt0 when main() returns. */
void rv_finish(int main_result);
void rv_finish(int main_result)
{
    bool pass = rv_checks_failed == 0 && main_result == 0;

    rv_printf("%s: %u checks, %u failed%s\n", pass ? "PASS" : "FAIL",
              rv_checks_run, rv_checks_failed,
              main_result ? " (main returned non-zero)" : "");
    rv_exit(pass ? 0 : 1);
}

void rv_rule(const char *name)
{
    current_rule = name;
}

static void report_failure(const char *file, int line)
{
    rv_checks_failed++;
    rv_printf("FAIL [%s] %s:%d: ", current_rule, file, line);
}

bool rv_check(bool ok, const char *expr, const char *file, int line)
{
    rv_checks_run++;
    if (!ok) {
        report_failure(file, line);
        rv_printf("check '%s'\n", expr);
    }
    return ok;
}

bool rv_check_eq(unsigned long long actual, unsigned long long expected,
                 const char *actual_expr, const char *expected_expr,
                 const char *file, int line)
{
    rv_checks_run++;
    if (actual != expected) {
        report_failure(file, line);
        rv_printf("check '%s == %s': got 0x%llx, expected 0x%llx\n",
                  actual_expr, expected_expr, actual, expected);
        return false;
    }
    return true;
}

void *memset(void *s, int c, size_t n)
{
    unsigned char *p = s;

    while (n--) {
        *p++ = c;
    }
    return s;
}

void *memcpy(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;

    while (n--) {
        *dp++ = *sp++;
    }
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *pa = a, *pb = b;

    for (; n; n--, pa++, pb++) {
        if (*pa != *pb) {
            return *pa - *pb;
        }
    }
    return 0;
}

size_t strlen(const char *s)
{
    size_t n = 0;

    while (s[n]) {
        n++;
    }
    return n;
}
