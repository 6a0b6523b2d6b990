/*
 * test_hostcore_netmap.c - px_netmap (host core): network descriptions
 * (Slurm's topology.conf and scontrol's answer, SimGrid platform files),
 * fitting them to a job's nodes, coordinates and hier groups.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "px_netmap.h"

static void coord_is(const px_netmap *m, uint32_t node, const uint32_t *want, unsigned dims)
{
    uint32_t c[PX_NET_MAX_DIMS];

    assert_int_equal(px_netmap_coord(m, node, PMIX_COORD_LOGICAL_VIEW, c), dims);
    assert_memory_equal(c, want, dims * sizeof(*c));
}

/* Two levels under one top switch: (leaf, port); host lists expand with
 * their zero padding. */
static void test_slurm_tree(void **state)
{
    const char *conf = "# comment\n"
                       "SwitchName=s1 Nodes=n[01-03]\n"
                       "\n"
                       "switchname=s2 nodes=n[04,05],login LinkSpeed=10\n"
                       "SwitchName=top Switches=s[1-2]\n";
    px_netmap m;
    char err[256], params[64];

    assert_int_equal(px_netmap_parse_slurm(conf, "t.conf", &m, err, sizeof(err)), 0);
    assert_int_equal(m.nnodes, 6);
    assert_string_equal(m.names[0], "n01");
    assert_string_equal(m.names[4], "n05");
    assert_string_equal(m.names[5], "login");
    assert_int_equal(m.shape.ldims, 2);
    assert_int_equal(m.shape.lsize[0], 2);
    assert_int_equal(m.shape.lsize[1], 3);
    assert_int_equal(m.shape.gdims, 1);
    assert_true(m.shape.switched);
    coord_is(&m, 2, (uint32_t[]){0, 2}, 2);
    coord_is(&m, 5, (uint32_t[]){1, 2}, 2);
    /* every switch holds 3: a regular tree, SimGrid's fat tree of it */
    assert_int_equal(px_netmap_fattree_params(&m, params, sizeof(params), err, sizeof(err)), 0);
    assert_string_equal(params, "2;3,2;1,1;1,1");
    px_netmap_free(&m);
}

/* scontrol show topology: both lists, "(null)", the upper switch listing
 * every node; several top switches add a digit. */
static void test_scontrol_forest(void **state)
{
    const char *text = "SwitchName=a Level=0 LinkSpeed=1 Nodes=c[0-1] Switches=(null)\n"
                       "SwitchName=b Level=0 LinkSpeed=1 Nodes=c[2-3] Switches=(null)\n"
                       "SwitchName=c Level=0 LinkSpeed=1 Nodes=c4 Switches=(null)\n"
                       "SwitchName=u1 Level=1 LinkSpeed=1 Nodes=c[0-3] Switches=a,b\n"
                       "SwitchName=u2 Level=1 LinkSpeed=1 Nodes=c4 Switches=c\n";
    px_netmap m;
    char err[256], params[64];
    uint32_t key[PX_NET_MAX_DIMS];

    assert_int_equal(px_netmap_parse_slurm(text, "scontrol", &m, err, sizeof(err)), 0);
    assert_int_equal(m.nnodes, 5);
    assert_int_equal(m.shape.ldims, 3);
    coord_is(&m, 3, (uint32_t[]){0, 1, 1}, 3);
    coord_is(&m, 4, (uint32_t[]){1, 0, 0}, 3);
    assert_int_equal(px_netmap_group_key(&m, 3, key), 2);
    assert_int_equal(key[0], 0);
    assert_int_equal(key[1], 1);
    /* not regular: pmixsim cannot build it */
    assert_int_equal(px_netmap_fattree_params(&m, params, sizeof(params), err, sizeof(err)), -1);
    assert_non_null(strstr(err, "not a regular tree"));
    px_netmap_free(&m);
}

static void test_slurm_errors(void **state)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"Nodes=n1\n", "expected SwitchName"},
        {"SwitchName=s1\n", "needs Nodes= or Switches="},
        {"SwitchName=s1 Nodes=n[1-\n", "does not parse"},
        {"SwitchName=s1 Nodes=n1\nSwitchName=s1 Nodes=n2\n", "described twice"},
        {"SwitchName=t Switches=s9\n", "not described"},
        {"SwitchName=a Nodes=n1\nSwitchName=b Nodes=n1\n", "under two switches"},
        {"SwitchName=a Switches=b\nSwitchName=b Switches=a\n", "cycle"},
        {"SwitchName=a Nodes=n1\nSwitchName=b Switches=c\nSwitchName=c Nodes=n2\n"
         "SwitchName=t Switches=a,b\n",
         "same depth"},
        {"# nothing\n", "no SwitchName"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        px_netmap m;
        char err[256] = "";
        assert_int_equal(px_netmap_parse_slurm(bad[i].text, "bad.conf", &m, err, sizeof(err)), -1);
        if (strstr(err, bad[i].says) == NULL)
            fail_msg("case %zu: '%s' does not say '%s'", i, err, bad[i].says);
        assert_null(m.names); /* nothing left to free */
        assert_null(m.lcoord);
    }
}

/* A platform file's first cluster: its names and the topology's
 * coordinates, the same as pmixsim's generated one. */
static void test_simgrid_platform(void **state)
{
    const char *xml = "<?xml version='1.0'?>\n<platform version=\"4.1\">\n"
                      "  <cluster id='c' prefix=\"node-\" suffix=\".x\" radical=\"0-15\"\n"
                      "    topology=\"FAT_TREE\" topo_parameters=\"2;4,4;1,2;1,1\" lat=\"1us\"/>\n"
                      "</platform>\n";
    px_netmap m;
    px_netshape s;
    char err[256];
    uint32_t a[PX_NET_MAX_DIMS];

    assert_int_equal(px_netmap_parse_simgrid(xml, "p.xml", &m, err, sizeof(err)), 0);
    assert_int_equal(m.nnodes, 16);
    assert_string_equal(m.names[9], "node-9.x");
    assert_string_equal(m.sg_topology, "FAT_TREE");
    assert_string_equal(m.sg_params, "2;4,4;1,2;1,1");
    assert_int_equal(px_netshape_simgrid("fattree", "2;4,4;1,2;1,1", 16, &s, err, sizeof(err)), 0);
    for (uint32_t i = 0; i < 16; i++) {
        unsigned d = px_netshape_coord(&s, i, PMIX_COORD_LOGICAL_VIEW, a);
        coord_is(&m, i, a, d);
    }
    coord_is(&m, 9, (uint32_t[]){2, 1}, 2);
    assert_true(m.shape.switched);
    px_netmap_free(&m);
    assert_int_equal(px_netmap_parse_simgrid("<platform/>", "p.xml", &m, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "no <cluster>"));
    assert_int_equal(px_netmap_parse_simgrid("<cluster radical='0-3' topology='RING'/>", "p.xml",
                                             &m, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "RING"));
}

/* Planes in a SimGrid platform: the clusters with the pmixlab.plane
 * property (another cluster before them is another part of the machine),
 * each a copy of the first, whose hosts are the nodes; pmixlab.nics names
 * a plane's devices, and without it plane p is each node's p-th NIC. A
 * plane that is not a copy is refused. */
static void test_simgrid_planes(void **state)
{
    const char *xml =
        "<platform version=\"4.1\">\n"
        "  <cluster id='login' prefix='login' radical='0-1' topology='FLAT'/>\n"
        "  <zone id='z' routing='Full'>\n"
        "  <cluster id='a' prefix='n' radical='0-3' topology='FAT_TREE'\n"
        "     topo_parameters='2;2,2;1,1;1,1'>\n"
        "    <prop id='pmixlab.plane' value='rail0'/><prop id='pmixlab.nics' value='mlx5_0'/>\n"
        "  </cluster>\n"
        "  <cluster id='b' prefix='n' suffix='.r1' radical='0-3' topology='FAT_TREE'\n"
        "     topo_parameters='2;2,2;1,1;1,1'>\n"
        "    <prop id='other' value='x'/><prop id='pmixlab.plane' value='rail1'/>\n"
        "  </cluster>\n"
        "  </zone>\n</platform>\n";
    px_nics two = {.n = 2, .fabric = true, .name = {"mlx5_0", "mlx5_1"}};
    px_nics one = {.n = 1, .fabric = true, .name = {"mlx5_0"}};
    px_netmap m;
    px_netplanes p;
    char err[512];

    (void)state;
    assert_int_equal(px_netmap_parse_simgrid(xml, "p.xml", &m, err, sizeof(err)), 0);
    assert_int_equal(m.nnodes, 4);
    assert_string_equal(m.names[3], "n3");
    assert_int_equal(m.nplanes, 2);
    assert_string_equal(m.plane[0], "rail0");
    assert_string_equal(m.plane[1], "rail1");
    assert_string_equal(m.plane_nics[0], "mlx5_0");
    assert_string_equal(m.plane_nics[1], "");
    assert_string_equal(m.plane_hosts[1][2], "n2.r1");
    coord_is(&m, 2, (uint32_t[]){1, 0}, 2);
    assert_non_null(strstr(m.source, "2 planes"));
    assert_int_equal(px_netplanes_make(&m, &two, &p, err, sizeof(err)), 0);
    assert_string_equal(p.dev[0], "mlx5_0");
    assert_string_equal(p.dev[1], "mlx5_1");
    assert_int_equal(px_netplanes_make(&m, &one, &p, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "plane rail1: the node has no NIC number 2 (it has 1)"));
    px_netmap_free(&m);

    const char *bad = "<cluster prefix='n' radical='0-3' topology='FAT_TREE'\n"
                      "  topo_parameters='2;2,2;1,1;1,1'><prop id='pmixlab.plane' value='a'/>\n"
                      "</cluster>\n"
                      "<cluster prefix='m' radical='0-2' topology='FLAT'>\n"
                      "  <prop id='pmixlab.plane' value='b'/></cluster>\n";
    assert_int_equal(px_netmap_parse_simgrid(bad, "p.xml", &m, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "plane b is not a copy of plane a"));
}

/* Fitting: by name when every job node is named, else in order; the hier
 * groups follow the leaf switches and are marked switched. */
static void test_fit_and_groups(void **state)
{
    const char *conf = "SwitchName=s1 Nodes=node[2-3]\n"
                       "SwitchName=s2 Nodes=node[0-1]\n"
                       "SwitchName=top Switches=s1,s2\n";
    char *names[] = {"node0", "node1", "node2", "node3"};
    char *others[] = {"a", "b", "c"};
    px_netmap m;
    char err[256];

    assert_int_equal(px_netmap_parse_slurm(conf, "t.conf", &m, err, sizeof(err)), 0);
    assert_int_equal(px_netmap_fit(&m, names, 4, err, sizeof(err)), 0);
    assert_true(m.by_name);
    coord_is(&m, 0, (uint32_t[]){1, 0}, 2);
    coord_is(&m, 3, (uint32_t[]){0, 1}, 2);
    px_coll_groups *g = px_netmap_groups(&m, NULL, 4);
    assert_non_null(g);
    /* two groups of two, hier's auto rule takes them */
    assert_ptr_equal(px_coll_auto_groups(PX_COLL_ALLGATHER, 4, 1000, g),
                     px_coll_algo_by_name("hier"));
    px_coll_groups_destroy(g);
    /* nodes 0 and 2 only: one on each switch */
    g = px_netmap_groups(&m, (uint32_t[]){0, 2}, 2);
    assert_non_null(g);
    assert_ptr_not_equal(px_coll_auto_groups(PX_COLL_ALLGATHER, 2, 1000, g),
                         px_coll_algo_by_name("hier"));
    px_coll_groups_destroy(g);
    assert_int_equal(px_netmap_fit(&m, others, 3, err, sizeof(err)), 0);
    assert_false(m.by_name);
    coord_is(&m, 0, (uint32_t[]){0, 0}, 2);
    assert_int_equal(px_netmap_fit(&m, names, 4, err, sizeof(err)), 0);
    char *five[] = {"x1", "x2", "x3", "x4", "x5"};
    assert_int_equal(px_netmap_fit(&m, five, 5, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "fewer than the job's 5"));
    coord_is(&m, 0, (uint32_t[]){1, 0}, 2); /* unchanged */
    px_netmap_free(&m);

    assert_int_equal(px_netmap_flat(&m, 3), 0);
    assert_true(m.flat);
    assert_int_equal(m.shape.ldims, 1);
    assert_int_equal(m.shape.lsize[0], 3);
    coord_is(&m, 2, (uint32_t[]){2}, 1);
    assert_non_null(strstr(m.source, "no topology"));
    px_netmap_free(&m);
}

/* PlaneName= lines: noted in order; a line without Nics=, a plane named
 * twice are refused. */
static void test_slurm_planes(void **state)
{
    const char *conf = "SwitchName=s0 Nodes=n[0-1]\n"
                       "PlaneName=rail0 Nics=mlx5_0,hfi1_0 # either\n"
                       "PlaneName=rail1 Nics=ib1\n";
    px_netmap m;
    char err[256];

    (void)state;
    assert_int_equal(px_netmap_parse_slurm(conf, "t.conf", &m, err, sizeof(err)), 0);
    assert_int_equal(m.nnodes, 2);
    assert_int_equal(m.nplanes, 2);
    assert_string_equal(m.plane[0], "rail0");
    assert_string_equal(m.plane_nics[0], "mlx5_0,hfi1_0");
    assert_string_equal(m.plane[1], "rail1");
    px_netmap_free(&m);
    assert_int_equal(px_netmap_parse_slurm("SwitchName=s0 Nodes=n0\nPlaneName=p\n", "t.conf", &m,
                                           err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "t.conf:2: expected PlaneName=NAME Nics="));
    assert_int_equal(px_netmap_parse_slurm("SwitchName=s0 Nodes=n0\nPlaneName=p Nics=a\n"
                                           "PlaneName=p Nics=b\n",
                                           "t.conf", &m, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "t.conf:3: plane p named twice"));
}

/* hwloc's OS devices: an HCA's network and OpenFabrics devices are one NIC
 * named after the OpenFabrics one; with HCAs, Ethernet is left out; alone,
 * it is the NIC. */
static void test_nics_from_hwloc(void **state)
{
    px_nics n;
    char err[256];

    (void)state;
    assert_int_equal(px_nics_read(PMIXLAB_TOPODIR "/two-hca.xml", &n, err, sizeof(err)), 0);
    assert_int_equal(n.n, 2);
    assert_true(n.fabric);
    assert_string_equal(n.name[0], "mlx5_0");
    assert_string_equal(n.alias[0], "ib0");
    assert_string_equal(n.name[1], "mlx5_1");
    assert_string_equal(n.alias[1], "ib1");
    assert_int_equal(px_nics_read(PMIXLAB_TOPODIR "/one-eth.xml", &n, err, sizeof(err)), 0);
    assert_int_equal(n.n, 1);
    assert_false(n.fabric);
    assert_string_equal(n.name[0], "eth0");
    assert_string_equal(n.alias[0], "");
    assert_int_equal(px_nics_read(PMIXLAB_TOPODIR "/no-such.xml", &n, err, sizeof(err)), -1);
    assert_int_equal(n.n, 0);
}

/* Planes: named by the file (a NIC found by either name), one per
 * OpenFabrics NIC without names, one "plane0" with a single NIC or with
 * Ethernet ports alone; a named plane whose NIC the node lacks is
 * refused. */
static void test_planes(void **state)
{
    px_nics two = {.n = 2, .fabric = true, .name = {"mlx5_0", "mlx5_1"}, .alias = {"ib0", "ib1"}};
    px_nics eth = {.n = 2, .name = {"eno1", "eno2"}};
    px_nics one = {.n = 1, .name = {"eth0"}};
    px_netmap m;
    px_netplanes p;
    char err[256];

    (void)state;
    assert_int_equal(px_netmap_parse_slurm("SwitchName=s Nodes=n0\nPlaneName=b Nics=ib1\n"
                                           "PlaneName=a Nics=hfi1_0,mlx5_0\n",
                                           "t.conf", &m, err, sizeof(err)),
                     0);
    assert_int_equal(px_netplanes_make(&m, &two, &p, err, sizeof(err)), 0);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.name[0], "b");
    assert_string_equal(p.dev[0], "mlx5_1");
    assert_string_equal(p.name[1], "a");
    assert_string_equal(p.dev[1], "mlx5_0");
    assert_int_equal(px_netplanes_make(&m, &one, &p, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "plane b: none of its NICs (ib1) is among the node's (eth0)"));
    px_netmap_free(&m);

    assert_int_equal(px_netmap_flat(&m, 2), 0);
    assert_int_equal(px_netplanes_make(&m, &two, &p, err, sizeof(err)), 0);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.name[1], "plane1");
    assert_string_equal(p.dev[1], "mlx5_1");
    assert_int_equal(px_netplanes_make(&m, &one, &p, err, sizeof(err)), 0);
    assert_int_equal(p.n, 1);
    assert_string_equal(p.name[0], "plane0");
    assert_string_equal(p.dev[0], "");
    assert_int_equal(px_netplanes_make(&m, &eth, &p, err, sizeof(err)), 0);
    assert_int_equal(p.n, 1); /* Ethernet ports alone: one plane */
    assert_string_equal(p.dev[0], "");
    px_netmap_free(&m);
}

/* Planes of nodes whose NICs differ: each node's own device per named
 * plane (a refusal names the node); without names, the fewest OpenFabrics
 * NICs any node has (a node's extra one is on no plane), and one plane
 * "plane0" as soon as some node has no OpenFabrics NIC. */
static void test_planes_per_node(void **state)
{
    px_nics nics[3] = {
        {.n = 2, .fabric = true, .name = {"mlx5_0", "mlx5_1"}, .alias = {"ib0", "ib1"}},
        {.n = 3, .fabric = true, .name = {"hfi1_0", "hfi1_1", "hfi1_2"}},
        {.n = 1, .name = {"eth0"}},
    };
    char *names[3] = {"n0", "n1", "n2"};
    px_netdevs devs[3];
    px_netmap m;
    px_netplanes p;
    char err[512];

    (void)state;
    assert_int_equal(px_netmap_parse_slurm("SwitchName=s Nodes=n[0-2]\n"
                                           "PlaneName=a Nics=mlx5_0,hfi1_0\n"
                                           "PlaneName=b Nics=ib1,hfi1_1\n",
                                           "t.conf", &m, err, sizeof(err)),
                     0);
    assert_int_equal(px_netplanes_make_nodes(&m, nics, 2, names, &p, devs, err, sizeof(err)), 0);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.name[0], "a");
    assert_string_equal(p.name[1], "b");
    assert_string_equal(devs[0][0], "mlx5_0");
    assert_string_equal(devs[0][1], "mlx5_1");
    assert_string_equal(devs[1][0], "hfi1_0");
    assert_string_equal(devs[1][1], "hfi1_1");
    assert_int_equal(px_netplanes_make_nodes(&m, nics, 3, names, &p, devs, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "node n2: plane a: none of its NICs (mlx5_0,hfi1_0) is among"));
    assert_int_equal(p.n, 0);
    px_netmap_free(&m);

    assert_int_equal(px_netmap_flat(&m, 3), 0);
    assert_int_equal(px_netplanes_make_nodes(&m, nics, 2, names, &p, devs, err, sizeof(err)), 0);
    assert_int_equal(p.n, 2);
    assert_string_equal(p.name[1], "plane1");
    assert_string_equal(devs[0][1], "mlx5_1");
    assert_string_equal(devs[1][1], "hfi1_1");
    assert_string_equal(devs[1][2], "");
    assert_int_equal(px_netplanes_make_nodes(&m, nics, 3, names, &p, devs, err, sizeof(err)), 0);
    assert_int_equal(p.n, 1);
    assert_string_equal(p.name[0], "plane0");
    assert_string_equal(devs[0][0], "");
    assert_string_equal(devs[2][0], "");
    px_netmap_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_slurm_tree),      cmocka_unit_test(test_scontrol_forest),
        cmocka_unit_test(test_slurm_errors),    cmocka_unit_test(test_simgrid_platform),
        cmocka_unit_test(test_fit_and_groups),  cmocka_unit_test(test_slurm_planes),
        cmocka_unit_test(test_nics_from_hwloc), cmocka_unit_test(test_planes),
        cmocka_unit_test(test_planes_per_node), cmocka_unit_test(test_simgrid_planes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
