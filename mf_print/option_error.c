#include "config.h"

#include <stdio.h>
#include <string.h>

#include "option_error.h"

const char *mf_option_error(char *buf, size_t size, const char *arg, int optopt_value,
			    const struct option *opts)
{
	if (arg[0] == '-' && arg[1] != '-' && optopt_value > 0 && optopt_value < 128) {
		snprintf(buf, size, "unknown option '-%c'", optopt_value);
		return buf;
	}
	const char *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	int matches = 0;
	for (const struct option *o = opts; o->name; o++)
		matches += len > 2 && !strncmp(o->name, arg + 2, len - 2);
	if (strncmp(arg, "--", 2))
		snprintf(buf, size, "unknown option '%s'", arg);
	else if (eq && optopt_value)
		snprintf(buf, size, "%.*s takes no value", (int)len, arg);
	else if (matches > 1)
		snprintf(buf, size, "'%.*s' is the start of more than one option", (int)len, arg);
	else
		snprintf(buf, size, "unknown option '%s'", arg);
	return buf;
}
