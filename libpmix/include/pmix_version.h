/*
 * pmix_version.h: the version of the PMIx interface this library provides.
 *
 * pmix_common.h includes it; programs written for OpenPMIx also include it
 * on its own to test PMIX_NUMERIC_VERSION (0xMMmmrr00: major, minor,
 * release).
 */
#ifndef PMIX_VERSION_H
#define PMIX_VERSION_H
/* OpenPMIx's spelling of the guard. */
#define PMIx_VERSION_H

#define PMIX_VERSION_MAJOR 4L
#define PMIX_VERSION_MINOR 2L
#define PMIX_VERSION_RELEASE 0L
#define PMIX_NUMERIC_VERSION 0x00040200

#endif /* PMIX_VERSION_H */
