/*
 * px_regex.h - reading back what PMIx_generate_regex and PMIx_generate_ppn
 * produce (the format is described in regex.c).
 */
#ifndef PX_REGEX_H
#define PX_REGEX_H

#include <pmix_common.h>

/* "pmixlab:n[2:1-3]" -> "n01,n02,n03" (malloc'd). PMIX_ERR_BAD_PARAM for
 * anything that is not our format; nothing is allocated then. */
pmix_status_t px_regex_expand_nodes(const char *regex, char **list);
/* "pmixlab:0-3;4-7" -> "0,1,2,3;4,5,6,7" (malloc'd). */
pmix_status_t px_regex_expand_ppn(const char *regex, char **list);

#endif /* PX_REGEX_H */
