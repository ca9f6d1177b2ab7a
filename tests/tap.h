/* A tiny TAP producer for the C unit tests: ok/not ok lines, the plan at the end, exit 1 when
 * any test failed, 99 on a bail-out. */
#ifndef MF_TAP_H
#define MF_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static int tap_count, tap_failed;

__attribute__((format(printf, 2, 3), unused)) static int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("%sok %d - ", cond ? "" : "not ", ++tap_count);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	tap_failed += !cond;
	return cond;
}

__attribute__((format(printf, 1, 2), unused)) static void tap_diag(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
}

__attribute__((noreturn, unused)) static void tap_bail(const char *why)
{
	printf("Bail out! %s\n", why);
	exit(99);
}

__attribute__((unused)) static int tap_done(void)
{
	printf("1..%d\n", tap_count);
	fflush(stdout);
	return tap_failed ? 1 : 0;
}

#endif
