/*
 * wl_prelude.h - force-included (-include) into workloads that keep their
 * process identity in a file-scope variable named `myproc`
 * (examples/bizcard.c and bench/fence_bench.c do today).
 *
 * Inside pmixsim every simulated process runs in one address space, so such
 * a variable would be shared by all of them. These workloads are compiled
 * with -Dmyproc='(*pmixsim_wl_myproc())': the use `myproc.rank` reads the
 * calling actor's own copy, and the definition
 * `static pmix_proc_t myproc;` turns into a compatible redeclaration of the
 * function below. This is a stopgap: a workload should keep such state in
 * main's frame (docs/simulation.md), and the flag goes once they do.
 */
#ifndef PMIXSIM_WL_PRELUDE_H
#define PMIXSIM_WL_PRELUDE_H

#include <pmix_common.h>

pmix_proc_t *pmixsim_wl_myproc_slot(void);

static inline pmix_proc_t *pmixsim_wl_myproc(void)
{
    return pmixsim_wl_myproc_slot();
}

#endif /* PMIXSIM_WL_PRELUDE_H */
