/*
 * program.c - PMIx programs loaded from a shared object (`pmixsim ./prog.so`).
 *
 * A researcher's program runs in pmixsim without being built into it: it is
 * compiled as a shared object that is linked against nothing
 * (`cc -shared -fPIC -o prog.so prog.c -I<pmixlab>/libpmix/include`, or the
 * CMake function pmixsim_add_program of cmake/PmixsimProgram.cmake), and its
 * undefined PMIx_* references resolve, when pmixsim dlopens it, to the
 * library linked into pmixsim, which exports exactly those functions
 * (simhost/pmixsim.dynlist). Each simulated process's actor then calls the
 * program's `main` as it calls a built-in workload's: main(argc, argv,
 * environ), argv = the program's path as given and its arguments.
 *
 * Before anything of the program runs (dlopen runs its constructors), the
 * file is read as ELF and refused, with a sentence that says why, when it
 * is not an ELF file, not a shared object (an executable, a PIE, an object
 * file), has no `main`, names libpmix.so in its DT_NEEDED entries (its calls
 * could reach a second copy of the library, outside the simulation), or has
 * writable globals: every simulated process runs in this one OS process and
 * would share them. A writable global is an OBJECT or TLS symbol of the
 * symbol table (.symtab, else .dynsym: a stripped program is checked for
 * its exported globals only) in a writable section that holds a program's
 * variables (.data, .bss, their thread-local twins, a section of the
 * program's own); the sections the toolchain fills (GOT, .dynamic, init
 * and fini arrays, .data.rel.ro, which is read-only once relocated) and the
 * names it uses (two leading underscores, C11 7.1.3, and crtstuff's
 * `completed.N`) are left out. After dlopen, a `PMIx_Init` found in the
 * program or its dependencies that is not pmixsim's own means a second
 * copy of the library came in some other way (a dependency linked to
 * libpmix): refused too.
 *
 * Privatization (--privatize). Instead of refusing the globals, each
 * simulated process gets its own copy of the program, as SMPI's dlopen
 * privatization does: the file is copied once per process under a name of
 * its own (glibc gives back the handle it already has for a path or a file
 * it has loaded), each copy is dlopened and unlinked at once, and process r
 * calls copy r's main. It costs a load per process (its pages, a link map,
 * a few memory mappings), so it is for small runs: at most
 * SIM_PRIVATIZE_MAX processes.
 */
#define _GNU_SOURCE /* dladdr, mkostemps */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmixsim.h"

extern char **environ;

/* What this pmixsim can load. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif
#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#endif

typedef int (*prog_main)(int argc, char **argv, char **envp);

struct sim_program {
    sim_workload wl;  /* name: the path as given; main: unused */
    void *handle;     /* the file itself */
    prog_main main;   /* its main */
    void **copies;    /* --privatize: one handle per process */
    prog_main *mains; /* and its main */
    uint32_t ncopies;
    char *globals; /* the writable globals found, or NULL */
};

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

/* The file, mapped read-only, and its section headers once checked. */
typedef struct elf_file {
    const unsigned char *data;
    size_t size;
    const Elf64_Ehdr *eh;
    const Elf64_Shdr *sh; /* NULL: no section headers */
    size_t nsh;
    const char *shstr; /* section names */
    size_t shstrsize;
} elf_file;

static bool in_file(const elf_file *f, uint64_t off, uint64_t len)
{
    return off <= f->size && len <= f->size - off;
}

/* The section's name, or "" if it has none that fits in the file. */
static const char *sec_name(const elf_file *f, const Elf64_Shdr *s)
{
    if (f->shstr == NULL || s->sh_name >= f->shstrsize ||
        memchr(f->shstr + s->sh_name, '\0', f->shstrsize - s->sh_name) == NULL)
        return "";
    return f->shstr + s->sh_name;
}

/* A string of string table section `link` at `off`, or NULL. */
static const char *str_at(const elf_file *f, uint32_t link, uint64_t off)
{
    const Elf64_Shdr *s;

    if (link >= f->nsh)
        return NULL;
    s = &f->sh[link];
    if (s->sh_type != SHT_STRTAB || !in_file(f, s->sh_offset, s->sh_size) || off >= s->sh_size)
        return NULL;
    if (memchr(f->data + s->sh_offset + off, '\0', s->sh_size - off) == NULL)
        return NULL;
    return (const char *)f->data + s->sh_offset + off;
}

/* Check the ELF header (a 64-bit shared object for this machine) and find
 * the section headers: 0, or -1 with a reason. */
static int elf_check(elf_file *f, const char *path, char *err, size_t errlen)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f->data;

    if (f->size < EI_NIDENT || memcmp(f->data, ELFMAG, SELFMAG) != 0)
        return fail(err, errlen,
                    "%s is not an ELF file: pmixsim loads a PMIx program built as a shared "
                    "object (cc -shared -fPIC; docs/simulation.md)",
                    path);
    if (f->data[EI_CLASS] != ELFCLASS64 || f->size < sizeof(Elf64_Ehdr))
        return fail(err, errlen, "%s is a 32-bit ELF file; pmixsim is a 64-bit program", path);
    if (f->data[EI_DATA] != HOST_DATA
#ifdef HOST_MACHINE
        || eh->e_machine != HOST_MACHINE
#endif
    )
        return fail(err, errlen, "%s was built for another kind of machine than pmixsim", path);
    f->eh = eh;
    if (eh->e_type == ET_EXEC)
        return fail(err, errlen,
                    "%s is an executable, not a shared object: build it with -shared -fPIC and "
                    "without -lpmix (docs/simulation.md)",
                    path);
    if (eh->e_type == ET_REL)
        return fail(err, errlen,
                    "%s is an object file, not a shared object: link it with cc -shared "
                    "(docs/simulation.md)",
                    path);
    if (eh->e_type != ET_DYN)
        return fail(err, errlen, "%s is not a shared object (ELF type %u)", path,
                    (unsigned)eh->e_type);
    if (eh->e_shoff == 0 || eh->e_shnum == 0)
        return 0; /* no section headers: nothing more to read */
    if (eh->e_shentsize != sizeof(Elf64_Shdr) ||
        !in_file(f, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)) ||
        eh->e_shoff % _Alignof(Elf64_Shdr) != 0)
        return fail(err, errlen, "%s: its ELF section headers are damaged", path);
    f->sh = (const Elf64_Shdr *)(f->data + eh->e_shoff);
    f->nsh = eh->e_shnum;
    if (eh->e_shstrndx < f->nsh && f->sh[eh->e_shstrndx].sh_type == SHT_STRTAB &&
        in_file(f, f->sh[eh->e_shstrndx].sh_offset, f->sh[eh->e_shstrndx].sh_size)) {
        f->shstr = (const char *)f->data + f->sh[eh->e_shstrndx].sh_offset;
        f->shstrsize = f->sh[eh->e_shstrndx].sh_size;
    }
    return 0;
}

/* The entries of section `s` as an array of `entsize`-byte records, or
 * NULL if they do not fit in the file. */
static const void *sec_entries(const elf_file *f, const Elf64_Shdr *s, size_t entsize, size_t *n)
{
    if (s->sh_type == SHT_NOBITS || !in_file(f, s->sh_offset, s->sh_size) ||
        s->sh_offset % 8 != 0 || s->sh_entsize != entsize)
        return NULL;
    *n = s->sh_size / entsize;
    return f->data + s->sh_offset;
}

/* The dynamic section: a DT_NEEDED naming libpmix.so (into `lib`, true), and
 * whether the file is a position-independent executable. */
static void elf_dynamic(const elf_file *f, char *lib, size_t liblen, bool *pie)
{
    *pie = false;
    lib[0] = '\0';
    for (size_t i = 0; i < f->nsh; i++) {
        const Elf64_Dyn *d;
        size_t n;
        if (f->sh[i].sh_type != SHT_DYNAMIC ||
            (d = sec_entries(f, &f->sh[i], sizeof(Elf64_Dyn), &n)) == NULL)
            continue;
        for (size_t k = 0; k < n && d[k].d_tag != DT_NULL; k++) {
            const char *name;
            if (d[k].d_tag == DT_FLAGS_1 && (d[k].d_un.d_val & DF_1_PIE) != 0)
                *pie = true;
            if (d[k].d_tag == DT_NEEDED &&
                (name = str_at(f, f->sh[i].sh_link, d[k].d_un.d_val)) != NULL &&
                strncmp(name, "libpmix.so", 10) == 0)
                snprintf(lib, liblen, "%s", name);
        }
    }
}

/* Sections the toolchain fills, writable only until relocated or for the
 * loader: not the program's variables. */
static bool toolchain_section(const char *name)
{
    static const char *const names[] = {
        ".dynamic", ".got",   ".got.plt",       ".init_array", ".fini_array",
        ".ctors",   ".dtors", ".preinit_array", ".jcr",        ".tm_clone_table"};

    if (strncmp(name, ".data.rel.ro", 12) == 0)
        return true;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

/* Names the toolchain gives its own variables. */
static bool toolchain_name(const char *name)
{
    const char *p;

    if (name[0] == '\0' || strncmp(name, "__", 2) == 0 || name[0] == '.')
        return true;
    if (strncmp(name, "completed.", 10) == 0) { /* crtstuff.c's flag */
        for (p = name + 10; *p >= '0' && *p <= '9'; p++)
            ;
        return *p == '\0' && p > name + 10;
    }
    return false;
}

/* Append `s` to the growing string *out (of *len bytes): returns false on
 * no memory. */
static bool append(char **out, size_t *len, const char *s)
{
    size_t add = strlen(s);
    char *grown = realloc(*out, *len + add + 1);

    if (grown == NULL)
        return false;
    memcpy(grown + *len, s, add + 1);
    *out = grown;
    *len += add;
    return true;
}

/* The program's writable globals, "name, name (static), ...", into
 * *globals (NULL: none); whether it exports `main` into *has_main; whether
 * it has no .symtab into *stripped. Returns 0, or -1 on no memory. */
static int elf_symbols(const elf_file *f, char **globals, bool *has_main, bool *stripped)
{
    const Elf64_Shdr *tab = NULL;
    size_t len = 0, count = 0;
    char more[64];

    *globals = NULL;
    *has_main = false;
    for (size_t i = 0; i < f->nsh; i++)
        if (f->sh[i].sh_type == SHT_SYMTAB)
            tab = &f->sh[i];
    *stripped = tab == NULL;
    for (size_t i = 0; i < f->nsh; i++) {
        /* The globals come from .symtab when there is one (it has the
         * statics too), else from .dynsym; main from .dynsym. */
        bool dyn = f->sh[i].sh_type == SHT_DYNSYM;
        bool vars = tab != NULL ? &f->sh[i] == tab : dyn;
        const Elf64_Sym *sym;
        size_t n;
        if ((!dyn && !vars) || (sym = sec_entries(f, &f->sh[i], sizeof(Elf64_Sym), &n)) == NULL)
            continue;
        for (size_t k = 1; k < n; k++) {
            const char *name = str_at(f, f->sh[i].sh_link, sym[k].st_name), *dot;
            unsigned type = ELF64_ST_TYPE(sym[k].st_info), bind = ELF64_ST_BIND(sym[k].st_info);
            const Elf64_Shdr *s;
            char one[320];
            if (name == NULL || sym[k].st_shndx == SHN_UNDEF || sym[k].st_shndx >= f->nsh)
                continue;
            if (dyn && type == STT_FUNC && bind != STB_LOCAL && strcmp(name, "main") == 0)
                *has_main = true;
            if (!vars || (type != STT_OBJECT && type != STT_TLS))
                continue;
            s = &f->sh[sym[k].st_shndx];
            if ((s->sh_flags & (SHF_WRITE | SHF_ALLOC)) != (SHF_WRITE | SHF_ALLOC) ||
                toolchain_section(sec_name(f, s)) || toolchain_name(name))
                continue;
            /* The first eight are named, the others counted. A static
             * inside a function is NAME.N. */
            if (++count > 8)
                continue;
            dot = strchr(name, '.');
            if (bind == STB_LOCAL && dot != NULL)
                snprintf(one, sizeof(one), "%s%.*s (static, in a function)", count > 1 ? ", " : "",
                         (int)(dot - name < 200 ? dot - name : 200), name);
            else
                snprintf(one, sizeof(one), "%s%.200s%s%s", count > 1 ? ", " : "", name,
                         bind == STB_LOCAL ? " (static)" : "",
                         type == STT_TLS ? " (thread-local)" : "");
            if (!append(globals, &len, one))
                return -1;
        }
    }
    snprintf(more, sizeof(more), " and %zu more", count - 8);
    if (count > 8 && !append(globals, &len, more))
        return -1;
    return 0;
}

/* dlopen `path` and find its main: the handle, or NULL with a reason (it
 * does not load, it has no main, it brings a second PMIx library). */
static void *load(const char *path, prog_main *main_fn, char *err, size_t errlen)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    void *pmix_init;
    Dl_info where;

    if (h == NULL) {
        const char *why = dlerror();
        fail(err, errlen, "cannot load %s: %s", path, why != NULL ? why : "dlopen failed");
        return NULL;
    }
    /* A PMIx_Init in the program or its dependencies that is not ours: a
     * second copy of the library, which knows nothing of the simulation. */
    pmix_init = dlsym(h, "PMIx_Init");
    if (pmix_init != NULL && pmix_init != (void *)PMIx_Init) {
        fail(err, errlen,
             "%s brings a second PMIx library (%s): its PMIx_* calls would not reach the "
             "simulation; build it without linking any libpmix (docs/simulation.md)",
             path,
             dladdr(pmix_init, &where) != 0 && where.dli_fname != NULL ? where.dli_fname : "?");
        dlclose(h);
        return NULL;
    }
    *main_fn = (prog_main)dlsym(h, "main");
    if (*main_fn == NULL) {
        fail(err, errlen, "%s has no main function", path);
        dlclose(h);
        return NULL;
    }
    return h;
}

int sim_program_open(const char *path, bool privatize, sim_program **out, char *err, size_t errlen)
{
    elf_file f = {0};
    struct stat st;
    char lib[256];
    bool pie, has_main, stripped;
    sim_program *p;
    int fd, rc = -1;

    *out = NULL;
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return fail(err, errlen, "cannot open the program %s: %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return fail(err, errlen,
                    "%s is not a file: pmixsim loads a PMIx program built as a "
                    "shared object",
                    path);
    }
    f.size = (size_t)st.st_size;
    if (f.size > 0) {
        f.data = mmap(NULL, f.size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (f.data == MAP_FAILED) {
            close(fd);
            return fail(err, errlen, "cannot read %s: %s", path, strerror(errno));
        }
    } else {
        f.data = (const unsigned char *)"";
    }
    close(fd);
    if (elf_check(&f, path, err, errlen) != 0)
        goto out;
    elf_dynamic(&f, lib, sizeof(lib), &pie);
    if (pie) {
        fail(err, errlen,
             "%s is an executable (a position-independent one), not a shared object: build it "
             "with -shared -fPIC and without -lpmix (docs/simulation.md)",
             path);
        goto out;
    }
    if (lib[0] != '\0') {
        fail(err, errlen,
             "%s is linked against %s: its PMIx_* calls would reach that second copy of the "
             "library, outside the simulation. Build it without -lpmix: pmixsim gives it the "
             "PMIx_* functions (docs/simulation.md)",
             path, lib);
        goto out;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL || elf_symbols(&f, &p->globals, &has_main, &stripped) != 0) {
        fail(err, errlen, "out of memory");
        if (p != NULL)
            free(p->globals);
        free(p);
        goto out;
    }
    if (f.sh != NULL && !has_main) {
        fail(err, errlen,
             "%s has no main function (each simulated process calls the program's exported "
             "main(argc, argv))",
             path);
        free(p->globals);
        free(p);
        goto out;
    }
    if (p->globals != NULL && !privatize) {
        fail(err, errlen,
             "%s has writable globals, which every simulated process would share (they all "
             "run in pmixsim's one OS process): %s. Keep such state in main's variables, or run "
             "with --privatize (a copy of the program per process; docs/simulation.md)",
             path, p->globals);
        free(p->globals);
        free(p);
        goto out;
    }
    if (stripped && !privatize)
        fprintf(stderr,
                "pmixsim: warning: %s has no symbol table (stripped): only its exported "
                "globals were checked, not its static variables\n",
                path);
    if ((p->handle = load(path, &p->main, err, errlen)) == NULL) {
        free(p->globals);
        free(p);
        goto out;
    }
    p->wl.name = path;
    p->wl.usage = "";
    *out = p;
    rc = 0;
out:
    if (f.size > 0)
        munmap((void *)f.data, f.size);
    return rc;
}

const sim_workload *sim_program_workload(const sim_program *p)
{
    return &p->wl;
}

/* A copy of `path` named for `rank`, dlopened and unlinked. */
static void *load_copy(const char *path, uint32_t rank, prog_main *main_fn, char *err,
                       size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    char copy[4096], buf[65536];
    int in, outfd;
    ssize_t n = 0;
    void *h = NULL;

    snprintf(copy, sizeof(copy), "%s/pmixsim-%u-XXXXXX.so", tmp != NULL && *tmp ? tmp : "/tmp",
             rank);
    if ((in = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
        fail(err, errlen, "--privatize: cannot open %s: %s", path, strerror(errno));
        return NULL;
    }
    if ((outfd = mkostemps(copy, 3, O_CLOEXEC)) < 0) {
        fail(err, errlen, "--privatize: cannot create a copy of %s (%s): %s", path, copy,
             strerror(errno));
        close(in);
        return NULL;
    }
    while ((n = read(in, buf, sizeof(buf))) > 0) {
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(outfd, buf + done, (size_t)(n - done));
            if (w < 0) {
                n = -1;
                break;
            }
            done += w;
        }
        if (n < 0)
            break;
    }
    close(in);
    if (close(outfd) != 0 || n < 0)
        fail(err, errlen, "--privatize: cannot copy %s to %s: %s", path, copy, strerror(errno));
    else
        h = load(copy, main_fn, err, errlen);
    unlink(copy); /* the loaded copy stays mapped */
    return h;
}

int sim_program_privatize(sim_program *p, uint32_t nprocs, char *err, size_t errlen)
{
    if (nprocs > SIM_PRIVATIZE_MAX)
        return fail(err, errlen,
                    "--privatize loads a copy of the program per process: at most %u processes, "
                    "not %u",
                    SIM_PRIVATIZE_MAX, nprocs);
    p->copies = calloc(nprocs, sizeof(*p->copies));
    p->mains = calloc(nprocs, sizeof(*p->mains));
    if (p->copies == NULL || p->mains == NULL)
        return fail(err, errlen, "out of memory");
    for (uint32_t r = 0; r < nprocs; r++) {
        p->copies[r] = load_copy(p->wl.name, r, &p->mains[r], err, errlen);
        if (p->copies[r] == NULL)
            return -1;
        p->ncopies = r + 1;
    }
    return 0;
}

int sim_program_run(const sim_program *p, uint32_t rank, int argc, char **argv)
{
    prog_main fn = p->mains != NULL && rank < p->ncopies ? p->mains[rank] : p->main;

    return fn(argc, argv, environ);
}

void sim_program_close(sim_program *p)
{
    if (p == NULL)
        return;
    /* The handles stay open: a program may have left threads, atexit
     * handlers or data that the C library still refers to. */
    free(p->copies);
    free(p->mains);
    free(p->globals);
    free(p);
}
