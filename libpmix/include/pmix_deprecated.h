/*
 * pmix_deprecated.h: names OpenPMIx keeps for programs written against older
 * versions of the Standard.
 *
 * OpenPMIx's pmix_common.h includes a header of this name, and programs
 * written for OpenPMIx sometimes include it themselves. Here the deprecated
 * constants, attributes and macros live in pmix_common.h with the others
 * (docs/abi.md lists them), so this header only makes sure they are
 * declared.
 */
#ifndef PMIX_DEPRECATED_H
#define PMIX_DEPRECATED_H
/* OpenPMIx's spelling of the guard. */
#define PMIx_DEPRECATED_H

#include <pmix_common.h>

#endif /* PMIX_DEPRECATED_H */
