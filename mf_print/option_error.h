/* What is wrong with a command-line option getopt_long refused, said the same way by mf_print
 * and the launcher. */
#ifndef MF_OPTION_ERROR_H
#define MF_OPTION_ERROR_H

#include <getopt.h>
#include <stddef.h>

/* Writes into buf (size bytes) why arg, the argument getopt_long refused (argv[optind - 1]),
 * is wrong, given its optopt (a short option's letter, or the value of a long option given a
 * value it does not take, which may be no letter at all) and the long options; returns buf. */
const char *mf_option_error(char *buf, size_t size, const char *arg, int optopt_value,
			    const struct option *opts);

#endif
