#!/usr/bin/env python3
"""sim_memory.py - where pmixsim's memory goes: bytes per simulated node and
per simulated process, by component. A measurement, never a test.

    bench/sim_memory.py BUILD_DIR [NODESxPPN ...] [--workload ARGS]
    bench/sim_memory.py build                      # 256x16 1024x16 1024x4

For every point it runs pmixsim twice: once under valgrind's massif (the
heap at its peak, by allocation site) and once as it is (peak RSS, from
/usr/bin/time). Each allocation site is given to a component by the first
frame, going outward from malloc, that names one:

    actor stacks  SimGrid's contexts (SwappedContext): allocated, not all resident
    job data      px_store_unpack_job, px_job_*, px_server_register_nspace
    store         px_store_*, px_htab_*, px_blob_*, px_kvs_*, groups
    client        px_client_*, PMIx_* (client API), the client's requests
    server        px_server_*, the server's trackers and connections
    collectives   px_coll_*
    pmixsim       the simulated host (sim_*, sgw_*, coords, planes)
    SimGrid       everything SimGrid allocates itself (hosts, links, mailboxes)

Then it fits, for each component and for the RSS, bytes = c + a * nodes +
b * processes over the points (least squares; three points solve it
exactly) and prints a and b: the bytes each simulated node and each
simulated process costs. It also prints each point's bytes per process, so
growth with the job's size shows. Needs valgrind and /usr/bin/time
(Debian: valgrind, time). Default workload: a fence collecting 256 B per
process, checked (`fence --iters 1 --size 256 --check`).
"""
import os
import re
import subprocess
import sys
import tempfile

COMPONENTS = [
    ("actor stacks", re.compile(r"SwappedContext|RawContext|create_context|ThreadContext")),
    ("job data", re.compile(r"px_store_unpack_job|px_store_load_job|px_job_|jobpack|"
                            r"px_server_register_nspace|register_job")),
    ("store", re.compile(r"px_store|px_htab|px_blob|px_kvs|px_gblob|px_pdata|groups_")),
    ("collectives", re.compile(r"px_coll")),
    ("server", re.compile(r"px_server|server_")),
    ("client", re.compile(r"px_client|PMIx_|client_")),
    ("pmixsim", re.compile(r"\bsim_|sgw_|pmixsim|coords_|planes_|run_one")),
    ("SimGrid", re.compile(r"simgrid|xbt_|sg_|s4u|smx_")),
]
ORDER = [c[0] for c in COMPONENTS] + ["other"]

LINE = re.compile(r"^( *)n(\d+): (\d+) (.*)$")


def classify(frames):
    for f in frames:
        for name, rx in COMPONENTS:
            if rx.search(f):
                return name
    return "other"


def peak_tree(path):
    """The heap tree of massif's peak snapshot as (depth, bytes, text) lines."""
    lines = open(path, errors="replace").read().splitlines()
    peak = None
    for i, l in enumerate(lines):
        if l == "heap_tree=peak":
            peak = i
    if peak is None:  # no peak marked: take the largest detailed snapshot
        best = -1
        for i, l in enumerate(lines):
            if l == "heap_tree=detailed":
                heap = int(lines[i - 3].split("=")[1]) if lines[i - 3].startswith("mem_heap_B") else 0
                if heap > best:
                    best, peak = heap, i
    out = []
    for l in lines[peak + 1:]:
        m = LINE.match(l)
        if m is None:
            break
        out.append((len(m.group(1)), int(m.group(3)), m.group(4)))
    return out


def by_component(tree):
    """Bytes per component: each leaf (or below-threshold entry) is given to
    the component its path from malloc outward names first."""
    totals = dict.fromkeys(ORDER, 0)
    path = []
    for i, (depth, nbytes, text) in enumerate(tree):
        path = path[:depth]
        path.append(text)
        leaf = i + 1 >= len(tree) or tree[i + 1][0] <= depth
        if depth == 0 or not leaf:
            continue
        totals[classify(path[1:])] += nbytes
    return totals


def run_point(build, nodes, ppn, workload, tmp):
    sim = os.path.join(build, "simhost", "pmixsim")
    cmd = [sim, "--quiet", "--nodes", str(nodes), "--ppn", str(ppn)] + workload
    out = os.path.join(tmp, "massif.%dx%d" % (nodes, ppn))
    # Without guard pages (SimGrid's mprotect splits the address space into
    # more segments than valgrind can track past a few thousand actors);
    # they cost no heap, so the figures do not change.
    mcmd = cmd[:1] + ["--cfg=contexts/guard-size:0"] + cmd[1:]
    subprocess.run(["valgrind", "--tool=massif", "--threshold=0.01", "--depth=40",
                    "--massif-out-file=" + out] + mcmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    comp = by_component(peak_tree(out))
    t = os.path.join(tmp, "time")
    subprocess.run(["/usr/bin/time", "-f", "%M", "-o", t] + cmd,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    comp["RSS"] = int(open(t).read().split()[-1]) * 1024
    return comp


def solve(points, values):
    """Least squares for v = c + a * nodes + b * procs."""
    rows = [(1.0, float(n), float(n * p)) for n, p in points]
    ata = [[sum(r[i] * r[j] for r in rows) for j in range(3)] for i in range(3)]
    atb = [sum(r[i] * v for r, v in zip(rows, values)) for i in range(3)]
    m = [ata[i] + [atb[i]] for i in range(3)]
    for c in range(3):
        piv = max(range(c, 3), key=lambda r: abs(m[r][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-12:
            raise SystemExit("sim_memory.py: the points do not separate nodes from processes: "
                             "give at least two ppn values and two node counts")
        for r in range(3):
            if r != c:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][3] / m[i][i] for i in range(3)]


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    build = argv[1]
    points, workload = [], ["fence", "--iters", "1", "--size", "256", "--check"]
    rest = argv[2:]
    if "--workload" in rest:
        i = rest.index("--workload")
        workload, rest = rest[i + 1:], rest[:i]
    for a in rest:
        n, _, p = a.partition("x")
        points.append((int(n), int(p or 1)))
    if not points:
        points = [(256, 16), (1024, 16), (1024, 4)]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, p in points:
            print("sim_memory: %d x %d ..." % (n, p), file=sys.stderr, flush=True)
            results.append(run_point(build, n, p, workload, tmp))
    keys = ORDER + ["RSS"]
    print("# bytes at each point (massif's peak heap by component; RSS from the kernel)")
    print("component\t" + "\t".join("%dx%d" % pt for pt in points))
    for k in keys:
        print(k + "\t" + "\t".join(str(r.get(k, 0)) for r in results))
    heap = [sum(r[k] for k in ORDER) for r in results]
    print("heap total\t" + "\t".join(str(h) for h in heap))
    print("# per process at each point (heap total / processes, RSS / processes)")
    print("point\theap_B_per_proc\trss_B_per_proc")
    for (n, p), h, r in zip(points, heap, results):
        print("%dx%d\t%.0f\t%.0f" % (n, p, h / (n * p), r["RSS"] / (n * p)))
    print("# fit: bytes = c + a * nodes + b * processes")
    print("component\tper_node_B\tper_process_B\tconstant_B")
    for k in keys + ["heap total"]:
        vals = heap if k == "heap total" else [r.get(k, 0) for r in results]
        c, a, b = solve(points, vals)
        print("%s\t%.0f\t%.0f\t%.0f" % (k, a, b, c))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
