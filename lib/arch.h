/* The processor's part of the library: lib/arch/<cpu>.h, the one configure chose for the host
 * (MF_ARCH_HEADER). */
#ifndef MF_ARCH_H
#define MF_ARCH_H

#include "config.h"

#include MF_ARCH_HEADER

#endif
