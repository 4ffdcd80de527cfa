// SPDX-License-Identifier: GPL-2.0
/*
 * route_suite.c - the KUnit suite "krwq_route" (module krwq_kunit_route):
 * where a RoCE address leads, krwq_fabric_route(), when one IPv4 address is
 * held by three netdev-bound krwq devices at once.  The guest makes them
 * before loading the module (scripts/guest/fabric.sh):
 *   route_devs=A,B,C  A and C on two netdevs of one network namespace, B
 *                     on a netdev of another;
 *   route_addr=IP     the address all three netdevs hold.
 * An address vector carries the destination GID and the MAC the RDMA core
 * resolved for it.  The namespace keeps B apart from A and C, and the MAC
 * tells A from C.  Without the parameters every case is skipped.
 */
#include <kunit/test.h>
#include <linux/etherdevice.h>
#include <linux/inet.h>
#include <linux/module.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "../module/krwq.h"

MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);

static char *route_devs = "";
module_param(route_devs, charp, 0444);
MODULE_PARM_DESC(route_devs, "A,B,C: krwq devices, A and C in one network namespace, B in another");

static char *route_addr = "";
module_param(route_addr, charp, 0444);
MODULE_PARM_DESC(route_addr, "the IPv4 address the netdevs of A, B and C all hold");

enum { RT_A, RT_B, RT_C, RT_DEVS };

struct rt {
	struct ib_device *ibdev[RT_DEVS];
	union ib_gid gid;	/* route_addr, IPv4-mapped */
};

static struct krwq_dev *rt_dev(struct rt *r, int i)
{
	return to_kdev(r->ibdev[i]);
}

static int rt_init(struct kunit *t)
{
	struct rt *r = kunit_kzalloc(t, sizeof(*r), GFP_KERNEL);
	char *list, *cur, *name;
	__be32 ip;
	int i = 0;

	if (!r)
		return -ENOMEM;
	t->priv = r;
	if (!*route_devs || !in4_pton(route_addr, -1, (u8 *)&ip, -1, NULL))
		return 0;
	ipv6_addr_set_v4mapped(ip, (struct in6_addr *)r->gid.raw);
	list = kunit_kzalloc(t, strlen(route_devs) + 1, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	strcpy(list, route_devs);
	cur = list;
	while ((name = strsep(&cur, ",")) && i < RT_DEVS) {
		struct ib_device *d = ib_device_get_by_name(name,
							    RDMA_DRIVER_UNKNOWN);

		/* only a device of krwq.ko may be looked into as one */
		if (d && (!d->ops.owner ||
			  strcmp(module_name(d->ops.owner), "krwq") ||
			  !to_kdev(d)->ndev)) {
			ib_device_put(d);
			d = NULL;
		}
		r->ibdev[i++] = d;
	}
	return 0;
}

static void rt_exit(struct kunit *t)
{
	struct rt *r = t->priv;
	int i;

	for (i = 0; i < RT_DEVS; i++)
		if (r->ibdev[i])
			ib_device_put(r->ibdev[i]);
}

static void rt_need_devices(struct kunit *t)
{
	struct rt *r = t->priv;
	int i;

	if (!*route_devs)
		kunit_skip(t, "no route_devs given");
	for (i = 0; i < RT_DEVS; i++)
		KUNIT_ASSERT_NOT_NULL_MSG(t, r->ibdev[i],
					  "device %d of route_devs=%s is no netdev-bound krwq device",
					  i, route_devs);
}

/*
 * Where an address vector of @from's leads when it names route_addr with
 * @dmac, a copy of the MAC of @mac_of's netdev (zeroes when @mac_of is
 * negative): the fabric id, or KRWQ_NO_DEST.
 */
static u32 rt_route(struct kunit *t, int from, int mac_of)
{
	struct rt *r = t->priv;
	struct krwq_dev *src = rt_dev(r, from);
	const struct ib_gid_attr *sgid;
	struct rdma_ah_attr ah = { .type = RDMA_AH_ATTR_TYPE_ROCE };
	struct krwq_route route;

	sgid = rdma_find_gid_by_port(&src->ibdev, &r->gid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, 1, NULL);
	KUNIT_ASSERT_FALSE_MSG(t, IS_ERR(sgid),
			       "%s has no RoCE v2 GID for %s",
			       dev_name(&src->ibdev.dev), route_addr);
	rdma_ah_set_grh(&ah, &r->gid, 0, sgid->index, 1, 0);
	ah.grh.sgid_attr = sgid;
	if (mac_of >= 0)
		ether_addr_copy(ah.roce.dmac, rt_dev(r, mac_of)->ndev->dev_addr);
	krwq_fabric_route(src, &ah, &route);
	rdma_put_gid_attr(sgid);
	return route.dest;
}

static u32 rt_id(struct kunit *t, int i)
{
	return rt_dev(t->priv, i)->fabric_id;
}

/* A device's own address with its own MAC leads to itself, in each namespace. */
static void rt_own_address(struct kunit *t)
{
	rt_need_devices(t);
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_A, RT_A), rt_id(t, RT_A));
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_B, RT_B), rt_id(t, RT_B));
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_C, RT_C), rt_id(t, RT_C));
}

/* In one namespace, the MAC picks which of two holders of the address. */
static void rt_mac_picks_the_device(struct kunit *t)
{
	rt_need_devices(t);
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_A, RT_C), rt_id(t, RT_C));
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_C, RT_A), rt_id(t, RT_A));
}

/* Another namespace's device is nobody, even with its own MAC named. */
static void rt_not_across_namespaces(struct kunit *t)
{
	rt_need_devices(t);
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_A, RT_B), KRWQ_NO_DEST);
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_B, RT_A), KRWQ_NO_DEST);
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_B, RT_C), KRWQ_NO_DEST);
}

/* Without a resolved MAC the sender's own device comes first. */
static void rt_no_mac_prefers_the_sender(struct kunit *t)
{
	rt_need_devices(t);
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_A, -1), rt_id(t, RT_A));
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_B, -1), rt_id(t, RT_B));
	KUNIT_EXPECT_EQ(t, rt_route(t, RT_C, -1), rt_id(t, RT_C));
}

static struct kunit_case krwq_route_cases[] = {
	KUNIT_CASE(rt_own_address),
	KUNIT_CASE(rt_mac_picks_the_device),
	KUNIT_CASE(rt_not_across_namespaces),
	KUNIT_CASE(rt_no_mac_prefers_the_sender),
	{}
};

static struct kunit_suite krwq_route_suite = {
	.name = "krwq_route",
	.init = rt_init,
	.exit = rt_exit,
	.test_cases = krwq_route_cases,
};

static struct kunit_suite *krwq_route_suites[] = { &krwq_route_suite };

/* Run from init, after the parameters are parsed (see cm_suite.c). */
static int __init rt_module_init(void)
{
	return __kunit_test_suites_init(krwq_route_suites,
					ARRAY_SIZE(krwq_route_suites));
}
module_init(rt_module_init);

static void __exit rt_module_exit(void)
{
	__kunit_test_suites_exit(krwq_route_suites,
				 ARRAY_SIZE(krwq_route_suites));
}
module_exit(rt_module_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("krwq: RoCE routing across network namespaces and MACs (KUnit)");
