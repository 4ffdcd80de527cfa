// SPDX-License-Identifier: GPL-2.0
/*
 * device.c - a krwq ib_device of either kind (InfiniBand mode or
 * netdev-bound; see struct krwq_dev): attributes, port, the one ops table,
 * user contexts, registration and release.
 */
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/wait_bit.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_mad.h>

#include "krwq.h"
#include "tx.h"

/*
 * No IEEE OUI is krwq's: the vendor ID is "krw" in ASCII, as a software
 * device without one has done before.  rdma-core's tests and a few tools
 * treat 0 as no device at all.  Neither value matches a hardware vendor's
 * table in perftest or a provider.
 */
#define KRWQ_VENDOR_ID		0x6b7277
#define KRWQ_VENDOR_PART_ID	0x7771	/* "wq" */
#define KRWQ_FW_VER		((u64)1 << 32)
#define KRWQ_GUID_BASE		0x0200000000004b52ULL	/* locally administered */

static bool krwq_netdev_parent;
module_param_named(netdev_parent, krwq_netdev_parent, bool, 0444);
MODULE_PARM_DESC(netdev_parent, "a netdev-bound device's sysfs parent is the device that carries its netdev, if any; udev then renames one on a PCI NIC as the NIC is named (default false)");

static int krwq_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *a, struct ib_udata *udata)
{
	struct krwq_dev *dev = to_kdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->fw_ver = KRWQ_FW_VER;
	a->sys_image_guid = dev->node_guid;
	a->max_mr_size = KRWQ_MAX_MR_SIZE;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = KRWQ_VENDOR_ID;
	a->vendor_part_id = KRWQ_VENDOR_PART_ID;
	a->hw_ver = 1;
	a->max_qp = KRWQ_MAX_QP;
	a->max_qp_wr = KRWQ_MAX_QP_WR;
	a->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_SHUTDOWN_PORT | IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_MEM_MGT_EXTENSIONS;
	a->kernel_cap_flags = IBK_LOCAL_DMA_LKEY;
	a->max_fast_reg_page_list_len = KRWQ_MAX_FAST_REG_PAGES;
	a->max_send_sge = KRWQ_MAX_SGE;
	a->max_recv_sge = KRWQ_MAX_SGE;
	a->max_sge_rd = KRWQ_MAX_SGE;
	a->max_cq = KRWQ_MAX_CQ;
	a->max_cqe = KRWQ_MAX_CQE;
	a->max_mr = KRWQ_MAX_MR;
	a->max_pd = KRWQ_MAX_PD;
	a->max_qp_rd_atom = KRWQ_MAX_RD_ATOM;
	a->max_qp_init_rd_atom = KRWQ_MAX_INIT_RD_ATOM;
	a->max_res_rd_atom = KRWQ_MAX_RD_ATOM * KRWQ_MAX_QP;
	/*
	 * The CPU's own atomics on the target: atomic against everything,
	 * the CPU included, which IB_ATOMIC_GLOB would say.  Reported is the
	 * weaker IB_ATOMIC_HCA (atomic among this device's QPs), which is
	 * just as true: the UCX that distributions ship (1.13) turns verbs
	 * atomics on for HCA only, and rxe reports HCA too.
	 */
	a->atomic_cap = IB_ATOMIC_HCA;
	a->max_ah = KRWQ_MAX_AH;
	a->max_srq = KRWQ_MAX_SRQ;
	a->max_srq_wr = KRWQ_MAX_SRQ_WR;
	a->max_srq_sge = KRWQ_MAX_SRQ_SGE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	/* a netdev-bound device goes with `rdma link delete` */
	if (dev->ndev)
		a->kernel_cap_flags |= IBK_ALLOW_USER_UNREG;
	return 0;
}

static int krwq_query_port(struct ib_device *ibdev, u32 port,
			   struct ib_port_attr *a)
{
	struct krwq_dev *dev = to_kdev(ibdev);

	/* the core zeroes *a before calling */
	a->state = IB_PORT_ACTIVE;
	a->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	if (!krwq_port_active(dev)) {
		a->state = IB_PORT_DOWN;
		a->phys_state = READ_ONCE(dev->ndev->flags) & IFF_UP ?
				IB_PORT_PHYS_STATE_POLLING :
				IB_PORT_PHYS_STATE_DISABLED;
	}
	a->max_mtu = KRWQ_MTU;
	a->active_mtu = krwq_port_mtu(dev);
	a->lid = dev->lid;
	a->sm_lid = dev->lid;
	a->lmc = 0;
	a->gid_tbl_len = dev->ndev ? KRWQ_ROCE_GID_TBL_LEN : 1;
	a->pkey_tbl_len = 1;
	a->max_msg_sz = KRWQ_MAX_MSG_SIZE;
	a->port_cap_flags = IB_PORT_CM_SUP;
	a->max_vl_num = 1;
	a->active_width = IB_WIDTH_4X;
	a->active_speed = IB_SPEED_EDR;
	return 0;
}

static int krwq_get_port_immutable(struct ib_device *ibdev, u32 port,
				   struct ib_port_immutable *imm)
{
	struct krwq_dev *dev = to_kdev(ibdev);

	imm->pkey_tbl_len = 1;
	if (dev->ndev) {
		/* RoCE v1 and v2: the MAD layer's QP1, so the IB CM and rdma_cm */
		imm->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
		imm->gid_tbl_len = KRWQ_ROCE_GID_TBL_LEN;
		imm->max_mad_size = IB_MGMT_MAD_SIZE;
	} else {
		/* no MAD agents: an IB-mode device has no subnet to manage */
		imm->core_cap_flags = RDMA_CORE_CAP_PROT_IB;
		imm->gid_tbl_len = 1;
		imm->max_mad_size = 0;
	}
	return 0;
}

static enum rdma_link_layer krwq_get_link_layer(struct ib_device *ibdev,
						u32 port)
{
	return to_kdev(ibdev)->ndev ? IB_LINK_LAYER_ETHERNET :
				      IB_LINK_LAYER_INFINIBAND;
}

/* InfiniBand mode only: a RoCE port's GIDs are the RDMA core's own */
static int krwq_query_gid(struct ib_device *ibdev, u32 port, int index,
			  union ib_gid *gid)
{
	if (index != 0 || to_kdev(ibdev)->ndev)
		return -EINVAL;
	krwq_dev_gid(to_kdev(ibdev), gid);
	return 0;
}

static int krwq_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			   u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int krwq_alloc_ucontext(struct ib_ucontext *uctx, struct ib_udata *udata)
{
	return 0;
}

static void krwq_dealloc_ucontext(struct ib_ucontext *uctx)
{
}

/*
 * Having the op lets ib_unregister_device() proceed while user processes
 * still hold the device open (they then see errors).  Nothing needs
 * revoking: a mapped ring is plain memory whose pages the mapping holds
 * (mmap.c), never device registers, so it may outlive the device.
 */
static void krwq_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

static void krwq_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%llu.%llu.%llu",
		 KRWQ_FW_VER >> 32, (KRWQ_FW_VER >> 16) & 0xffff,
		 KRWQ_FW_VER & 0xffff);
}

static void krwq_dealloc_driver(struct ib_device *ibdev);

static const struct ib_device_ops krwq_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_QIB,

	.query_device = krwq_query_device,
	.query_port = krwq_query_port,
	.get_port_immutable = krwq_get_port_immutable,
	.get_link_layer = krwq_get_link_layer,
	.dealloc_driver = krwq_dealloc_driver,
	.query_gid = krwq_query_gid,
	.query_pkey = krwq_query_pkey,
	.get_dev_fw_str = krwq_get_dev_fw_str,
	.alloc_hw_port_stats = krwq_alloc_hw_port_stats,
	.get_hw_stats = krwq_get_hw_stats,

	.alloc_ucontext = krwq_alloc_ucontext,
	.dealloc_ucontext = krwq_dealloc_ucontext,
	.disassociate_ucontext = krwq_disassociate_ucontext,
	.mmap = krwq_mmap,
	.mmap_free = krwq_mmap_free,

	.alloc_pd = krwq_alloc_pd,
	.dealloc_pd = krwq_dealloc_pd,
	.create_ah = krwq_create_ah,
	.create_user_ah = krwq_create_ah,
	.query_ah = krwq_query_ah,
	.destroy_ah = krwq_destroy_ah,

	.get_dma_mr = krwq_get_dma_mr,
	.reg_user_mr = krwq_reg_user_mr,
	.dereg_mr = krwq_dereg_mr,
	.alloc_mr = krwq_alloc_mr,
	.map_mr_sg = krwq_map_mr_sg,

	.create_cq = krwq_create_cq,
	.destroy_cq = krwq_destroy_cq,
#ifdef KRWQ_HAVE_PRE_DESTROY_CQ
	/*
	 * Without pre_destroy_cq, ib_free_cq() frees a CQ's adaptive
	 * moderation before destroy_cq, while a late handler call may still
	 * run its poller: no modify_cq, so the RDMA core starts none.
	 */
	.pre_destroy_cq = krwq_pre_destroy_cq,
	.modify_cq = krwq_modify_cq,
#endif
	.resize_cq = krwq_resize_cq,
	.poll_cq = krwq_poll_cq,
	.req_notify_cq = krwq_req_notify_cq,

	.create_srq = krwq_create_srq,
	.modify_srq = krwq_modify_srq,
	.query_srq = krwq_query_srq,
	.destroy_srq = krwq_destroy_srq,
	.post_srq_recv = krwq_post_srq_recv,

	.create_qp = krwq_create_qp,
	.modify_qp = krwq_modify_qp,
	.query_qp = krwq_query_qp,
	.fill_res_qp_entry = krwq_fill_res_qp_entry,
	.destroy_qp = krwq_destroy_qp,
	.post_send = krwq_post_send,
	.post_recv = krwq_post_recv,

	INIT_RDMA_OBJ_SIZE(ib_ah, krwq_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, krwq_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_pd, krwq_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, krwq_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, krwq_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, krwq_ucontext, ibuc),
};

/*
 * Devices whose dealloc_driver has yet to finish: module exit waits for
 * none to be left, since `rdma link delete` or a vanished netdev may be
 * tearing one down in another thread when the last one leaves the fabric.
 */
static atomic_t krwq_dev_count = ATOMIC_INIT(0);

/**
 * krwq_dev_wait_all_released() - wait until every device's release ran.
 *
 * Context: module exit, after every device was unregistered.
 */
void krwq_dev_wait_all_released(void)
{
	wait_var_event(&krwq_dev_count, !atomic_read(&krwq_dev_count));
}

/* What krwq_dev_alloc() set up, undone: the device is unregistered. */
static void krwq_dev_release(struct krwq_dev *dev)
{
	krwq_fabric_leave(dev);
	krwq_net_detach(dev);
	if (dev->ndev)
		dev_put(dev->ndev);
	WARN_ON(!xa_empty(&dev->qps) || !xa_empty(&dev->mrs));
	xa_destroy(&dev->qps);
	xa_destroy(&dev->mrs);
	free_percpu(dev->stats);
	if (atomic_dec_and_test(&krwq_dev_count))
		wake_up_var(&krwq_dev_count);
}

/*
 * ib_device_ops.dealloc_driver: the RDMA core has unregistered the device
 * and destroyed every object on it, or registration failed and the device
 * is being freed (ib_dealloc_device() calls this too); the core frees the
 * ib_device itself.
 */
static void krwq_dealloc_driver(struct ib_device *ibdev)
{
	krwq_dev_release(to_kdev(ibdev));
}

/* Allocates a device of either kind; @ndev NULL for InfiniBand mode. */
static struct krwq_dev *krwq_dev_alloc(struct net_device *ndev)
{
	struct krwq_dev *dev;
	struct ib_device *ibdev;

	dev = ib_alloc_device(krwq_dev, ibdev);
	if (!dev)
		return NULL;
	ibdev = &dev->ibdev;
	dev->stats = alloc_percpu(struct krwq_stats);
	if (!dev->stats) {
		ib_dealloc_device(ibdev);
		return NULL;
	}
	dev->ndev = ndev;
	spin_lock_init(&dev->uflush_lock);
	dev->uflush_stamp = jiffies;
	skb_queue_head_init(&dev->tx_q);
	INIT_WORK(&dev->tx_work, krwq_tx_work);
	xa_init_flags(&dev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->mrs, XA_FLAGS_ALLOC1 | XA_FLAGS_LOCK_IRQ);
	/* every kernel address, for kernel PDs' local access; never freed */
	dev->local_dma_mr = (struct krwq_mr) {
		.dev = dev, .kind = KRWQ_MR_DMA, .key = KRWQ_LOCAL_DMA_LKEY,
		.valid = true, .access = IB_ACCESS_LOCAL_WRITE,
		.length = U64_MAX, .users = REFCOUNT_INIT(1),
	};
	if (krwq_fabric_join(dev)) {
		free_percpu(dev->stats);
		ib_dealloc_device(ibdev);
		return NULL;
	}

	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	/* as rxe and siw: nvme-rdma, for one, makes an I/O queue per vector */
	ibdev->num_comp_vectors = num_possible_cpus();
	/*
	 * use_cq_dim, the RDMA core's adaptive moderation of the CQs of
	 * ib_alloc_cq() through modify_cq, is left off (unset): measured
	 * under TCG it slowed NVMe-oF at depth 1 and with one job at depth
	 * 32 (docs/benchmarks.md).  `rdma dev set NAME adaptive-moderation
	 * on` turns it on for the CQs made after.
	 */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POLL_CQ) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ib_set_device_ops(ibdev, &krwq_dev_ops);
	/* from here on ib_dealloc_device() runs krwq_dealloc_driver() */
	atomic_inc(&krwq_dev_count);
	ibdev->ops.uverbs_abi_ver = krwq_abi;
	ibdev->local_dma_lkey = KRWQ_LOCAL_DMA_LKEY;
	return dev;
}

/* Registers @dev under @name; on failure frees it. */
static int krwq_dev_register(struct krwq_dev *dev, const char *name)
{
	int ret;

	dev->ibdev.node_guid = dev->node_guid;
	ret = ib_register_device(&dev->ibdev, name, NULL);
	if (ret)
		ib_dealloc_device(&dev->ibdev);	/* krwq_dealloc_driver() */
	return ret;
}

/**
 * krwq_dev_add() - create and register the InfiniBand-mode device
 * krwq<index>.
 * @index: 0, 1, ...; gives the LID (index + 1) and the node GUID.
 * @out: the registered device.
 *
 * Context: process.
 * Return: 0, -ENOMEM, or a negative errno from the RDMA core.
 */
int krwq_dev_add(unsigned int index, struct krwq_dev **out)
{
	struct krwq_dev *dev;
	int ret;

	dev = krwq_dev_alloc(NULL);
	if (!dev)
		return -ENOMEM;
	dev->index = index;
	dev->lid = index + 1;
	dev->node_guid = cpu_to_be64(KRWQ_GUID_BASE + ((u64)index << 16));
	strscpy(dev->ibdev.node_desc, "krwq loopback HCA",
		sizeof(dev->ibdev.node_desc));
	ret = krwq_dev_register(dev, "krwq%d");
	if (!ret)
		*out = dev;
	return ret;
}

/**
 * krwq_dev_add_netdev() - create and register a netdev-bound device.
 * @name: its name, as `rdma link add NAME` gave it.
 * @ndev: the netdev it is bound to; the RDMA core holds it from here on.
 *
 * The port's state, MTU and GIDs follow @ndev from then on (netdev.c and
 * the RDMA core's RoCE GID management).
 *
 * Context: process, not under RTNL.
 * Return: 0, -ENOMEM, -EADDRINUSE when something else holds RoCEv2's UDP
 * port in @ndev's network namespace (krwq_net_attach()), or a negative
 * errno from the RDMA core.
 */
int krwq_dev_add_netdev(const char *name, struct net_device *ndev)
{
	struct krwq_dev *dev;
	int ret;

	dev = krwq_dev_alloc(ndev);
	if (!dev)
		return -ENOMEM;
	/* our own hold: query_port may still read it after the core's goes */
	dev_hold(ndev);
	dev->port_was_active = krwq_port_active(dev);
	addrconf_addr_eui48((u8 *)&dev->node_guid, ndev->dev_addr);
	strscpy(dev->ibdev.node_desc, "krwq RoCE loopback HCA",
		sizeof(dev->ibdev.node_desc));
	/*
	 * Asked for, the device that carries @ndev, if any (a NIC's PCI or
	 * virtio function; none for a dummy, veth or VLAN), is this one's
	 * parent too, as for an HCA that shares its function with its
	 * netdev: sysfs then lists @ndev in
	 * /sys/class/infiniband/NAME/device/net/, where RDMA tools look for
	 * a device's netdev.  Not by default: rdma-core's udev rule renames
	 * a device whose parent is a PCI function after the NIC's onboard
	 * index or PCI location, and the name `rdma link add` gave would be
	 * gone.
	 */
	if (krwq_netdev_parent)
		dev->ibdev.dev.parent = ndev->dev.parent;
	ret = krwq_net_attach(dev);
	if (!ret)
		ret = ib_device_set_netdev(&dev->ibdev, ndev, 1);
	if (ret) {
		ib_dealloc_device(&dev->ibdev);	/* krwq_dealloc_driver() */
		return ret;
	}
	return krwq_dev_register(dev, name);
}

/**
 * krwq_dev_remove() - unregister a device; the RDMA core destroys every
 * object on it and then frees it (krwq_dealloc_driver()).
 * @dev: the device.
 *
 * Context: process.
 */
void krwq_dev_remove(struct krwq_dev *dev)
{
	ib_unregister_device(&dev->ibdev);
}
