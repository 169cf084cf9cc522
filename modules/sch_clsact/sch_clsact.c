// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The ingress and clsact qdiscs (seed 007), as one out-of-tree module that
 * stands in for the tree's sch_ingress.ko.
 *
 * Neither qdisc queues anything. Each is a holder of classifier blocks
 * that the core runs from its hooks in net/core/dev.c: "ingress" one
 * block at the receive hook, "clsact" one at the receive hook and one at
 * the transmit hook, before the root qdisc and without its lock. A block
 * reaches the hook through the device's tcx entry, whose mini_Qdisc the
 * block's chain head is published to. The hook's static key is held only
 * while the block has filters on chain 0 (the only chain the hook starts
 * from), so a device without either qdisc, or with one but no filters,
 * costs nothing per packet. The tree's module holds the key for as long as
 * the qdisc exists.
 *
 * Beyond the tree's module, each of clsact's directions counts its own
 * packets, bytes and drops. tc shows them as classes ffff:fff2 (ingress)
 * and ffff:fff3 (egress); the qdisc's own counters are their sum.
 */
#include <linux/module.h>
#include <linux/percpu.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <net/gen_stats.h>
#include <net/netlink.h>
#include <net/pkt_cls.h>
#include <net/pkt_sched.h>
#include <net/tcx.h>

enum { DIR_INGRESS, DIR_EGRESS, NR_DIRS };

/* Per-direction counters, per CPU, updated by the core's hooks through the
 * mini_Qdisc pointers. Freed after a grace period: a hook may still be
 * counting when the qdisc is destroyed.
 */
struct clsact_pcpu {
	struct gnet_stats_basic_sync bstats[NR_DIRS];
	struct gnet_stats_queue qstats[NR_DIRS];
};

struct clsact_stats {
	struct clsact_pcpu __percpu *pcpu;
	struct rcu_head rcu;
};

/* One direction's hook: what init took, so that destroy, which also runs
 * after a failed init, gives back exactly that.
 */
struct clsact_hook {
	struct tcf_block *block;
	struct tcf_block_ext_info block_info;
	struct mini_Qdisc_pair miniqp;
	bool ingress;
	/* The hook's static key, taken and released by the block's chain
	 * head changes, which the block serializes per qdisc.
	 */
	bool key_held;
	bool entry_held;	/* a reference in the device's tcx entry */
};

struct clsact_sched {
	struct clsact_hook hook[NR_DIRS];
	struct clsact_stats *stats;
};

static atomic_t keys_held = ATOMIC_INIT(0);

static int clsact_param_keys_held(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&keys_held));
}

static const struct kernel_param_ops keys_held_ops = {
	.get = clsact_param_keys_held,
};
module_param_cb(keys_held, &keys_held_ops, NULL, 0444);
MODULE_PARM_DESC(keys_held, "ingress/egress hook static keys held: one per qdisc direction with filters");

static struct Qdisc_ops ingress_ops;

static unsigned int nr_dirs(const struct Qdisc *sch)
{
	return sch->ops == &ingress_ops ? 1 : NR_DIRS;
}

static void clsact_stats_free_rcu(struct rcu_head *head)
{
	struct clsact_stats *stats = container_of(head, struct clsact_stats, rcu);

	free_percpu(stats->pcpu);
	kfree(stats);
}

static struct clsact_stats *clsact_stats_alloc(void)
{
	struct clsact_stats *stats = kzalloc(sizeof(*stats), GFP_KERNEL);
	int cpu, dir;

	if (!stats)
		return NULL;
	stats->pcpu = alloc_percpu(struct clsact_pcpu);
	if (!stats->pcpu) {
		kfree(stats);
		return NULL;
	}
	for_each_possible_cpu(cpu)
		for (dir = 0; dir < NR_DIRS; dir++)
			gnet_stats_basic_sync_init(&per_cpu_ptr(stats->pcpu, cpu)->bstats[dir]);
	return stats;
}

static void clsact_key_get(struct clsact_hook *h)
{
	if (h->key_held)
		return;
	if (h->ingress)
		net_inc_ingress_queue();
	else
		net_inc_egress_queue();
	h->key_held = true;
	atomic_inc(&keys_held);
}

static void clsact_key_put(struct clsact_hook *h)
{
	if (!h->key_held)
		return;
	if (h->ingress)
		net_dec_ingress_queue();
	else
		net_dec_egress_queue();
	h->key_held = false;
	atomic_dec(&keys_held);
}

/* Called with chain 0's new first filter, or NULL when chain 0 empties (or
 * this qdisc leaves a block that has filters). The mini_Qdisc is published
 * before the key turns the hook on, and the key turned off after it is
 * withdrawn; the hook copes with a NULL mini_Qdisc either way.
 */
static void clsact_head_change(struct tcf_proto *tp_head, void *priv)
{
	struct clsact_hook *h = priv;
	struct mini_Qdisc *cur;

	/*
	 * The hook's pointer is the device's, not this qdisc's: a qdisc
	 * replacing this one binds its blocks, and so publishes its own
	 * mini_Qdisc if they hold filters, before this one is destroyed.
	 * Withdraw only our own.
	 */
	cur = rcu_dereference_protected(*h->miniqp.p_miniq, 1);
	if (tp_head || !cur || cur == &h->miniqp.miniq1 || cur == &h->miniqp.miniq2)
		mini_qdisc_pair_swap(&h->miniqp, tp_head);
	if (tp_head)
		clsact_key_get(h);
	else
		clsact_key_put(h);
}

static int clsact_hook_init(struct Qdisc *sch, struct clsact_sched *q, int dir,
			    struct netlink_ext_ack *extack)
{
	struct clsact_hook *h = &q->hook[dir];
	struct net_device *dev = qdisc_dev(sch);
	bool ingress = dir == DIR_INGRESS;
	struct bpf_mprog_entry *entry;
	bool created;

	h->ingress = ingress;
	entry = tcx_entry_fetch_or_create(dev, ingress, &created);
	if (!entry) {
		NL_SET_ERR_MSG(extack, "no memory for the device's tcx entry");
		return -ENOMEM;
	}
	tcx_miniq_inc(entry);
	h->entry_held = true;
	mini_qdisc_pair_init(&h->miniqp, sch, &tcx_entry(entry)->miniq);
	/* Count this direction on its own (the pair inherits the qdisc's). */
	h->miniqp.miniq1.cpu_bstats = &q->stats->pcpu->bstats[dir];
	h->miniqp.miniq2.cpu_bstats = &q->stats->pcpu->bstats[dir];
	h->miniqp.miniq1.cpu_qstats = &q->stats->pcpu->qstats[dir];
	h->miniqp.miniq2.cpu_qstats = &q->stats->pcpu->qstats[dir];
	if (created)
		tcx_entry_update(dev, entry, ingress);

	h->block_info.binder_type = ingress ? FLOW_BLOCK_BINDER_TYPE_CLSACT_INGRESS :
					      FLOW_BLOCK_BINDER_TYPE_CLSACT_EGRESS;
	h->block_info.chain_head_change = clsact_head_change;
	h->block_info.chain_head_change_priv = h;
	return tcf_block_get_ext(&h->block, sch, &h->block_info, extack);
}

static void clsact_hook_destroy(struct Qdisc *sch, struct clsact_sched *q, int dir)
{
	struct clsact_hook *h = &q->hook[dir];
	struct net_device *dev = qdisc_dev(sch);
	bool ingress = dir == DIR_INGRESS;
	struct bpf_mprog_entry *entry;

	/* Unpublishes the chain from the hook (head change to NULL) if chain 0
	 * still exists; after it no head change reaches this hook.
	 */
	tcf_block_put_ext(h->block, sch, &h->block_info);
	h->block = NULL;
	clsact_key_put(h);

	if (h->entry_held) {
		entry = tcx_entry_fetch(dev, ingress);
		tcx_miniq_dec(entry);
		if (!tcx_entry_is_active(entry)) {
			tcx_entry_update(dev, NULL, ingress);
			tcx_entry_free(entry);
		}
		h->entry_held = false;
	}
}

static int clsact_init(struct Qdisc *sch, struct nlattr *opt,
		       struct netlink_ext_ack *extack)
{
	struct clsact_sched *q = qdisc_priv(sch);
	unsigned int dir;
	int err;

	/* Only the device's ingress slot, under the parent that names the
	 * qdisc's kind (ffff:fff1 for both).
	 */
	if (sch->parent != (sch->ops == &ingress_ops ? TC_H_INGRESS : TC_H_CLSACT)) {
		NL_SET_ERR_MSG(extack, "ingress and clsact attach only at parent ffff:fff1");
		return -EOPNOTSUPP;
	}

	q->stats = clsact_stats_alloc();
	if (!q->stats)
		return -ENOMEM;

	for (dir = 0; dir < nr_dirs(sch); dir++) {
		err = clsact_hook_init(sch, q, dir, extack);
		if (err)
			return err;	/* the core calls ->destroy() */
		mini_qdisc_pair_block_init(&q->hook[dir].miniqp, q->hook[dir].block);
	}
	return 0;
}

static void clsact_destroy(struct Qdisc *sch)
{
	struct clsact_sched *q = qdisc_priv(sch);
	unsigned int dir;

	for (dir = 0; dir < nr_dirs(sch); dir++)
		clsact_hook_destroy(sch, q, dir);
	if (q->stats)
		call_rcu(&q->stats->rcu, clsact_stats_free_rcu);
	q->stats = NULL;
}

static void clsact_sum(struct clsact_sched *q, int dir,
		       struct gnet_stats_basic_sync *b, struct gnet_stats_queue *qs)
{
	gnet_stats_add_basic(b, &q->stats->pcpu->bstats[dir], NULL, false);
	gnet_stats_add_queue(qs, &q->stats->pcpu->qstats[dir], NULL);
}

static int clsact_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct clsact_sched *q = qdisc_priv(sch);
	struct gnet_stats_queue qs = {};
	struct gnet_stats_basic_sync b;
	struct nlattr *nest;
	unsigned int dir;

	/* The qdisc's counters, which the core dumps next, are the sum of
	 * the directions'. Dumps run under RTNL, the only writer.
	 */
	gnet_stats_basic_sync_init(&b);
	for (dir = 0; dir < nr_dirs(sch); dir++)
		clsact_sum(q, dir, &b, &qs);
	u64_stats_update_begin(&sch->bstats.syncp);
	u64_stats_set(&sch->bstats.bytes, u64_stats_read(&b.bytes));
	u64_stats_set(&sch->bstats.packets, u64_stats_read(&b.packets));
	u64_stats_update_end(&sch->bstats.syncp);
	sch->qstats.drops = qs.drops;
	sch->qstats.overlimits = qs.overlimits;

	nest = nla_nest_start_noflag(skb, TCA_OPTIONS);
	if (!nest)
		return -1;
	return nla_nest_end(skb, nest);
}

/* Classes: the ingress qdisc hands out minor + 1 for any minor, so that
 * filters attach under any parent minor; clsact knows two minors only.
 */
static unsigned long ingress_find(struct Qdisc *sch, u32 classid)
{
	return TC_H_MIN(classid) + 1;
}

static unsigned long clsact_find(struct Qdisc *sch, u32 classid)
{
	u32 minor = TC_H_MIN(classid);

	return minor == TC_H_MIN(TC_H_MIN_INGRESS) || minor == TC_H_MIN(TC_H_MIN_EGRESS) ?
	       minor : 0;
}

static unsigned long ingress_bind_tcf(struct Qdisc *sch, unsigned long parent, u32 classid)
{
	return ingress_find(sch, classid);
}

static unsigned long clsact_bind_tcf(struct Qdisc *sch, unsigned long parent, u32 classid)
{
	return clsact_find(sch, classid);
}

static void clsact_unbind_tcf(struct Qdisc *sch, unsigned long cl)
{
}

static struct Qdisc *clsact_leaf(struct Qdisc *sch, unsigned long cl)
{
	return NULL;
}

static struct tcf_block *ingress_tcf_block(struct Qdisc *sch, unsigned long cl,
					   struct netlink_ext_ack *extack)
{
	struct clsact_sched *q = qdisc_priv(sch);

	return q->hook[DIR_INGRESS].block;
}

static struct tcf_block *clsact_tcf_block(struct Qdisc *sch, unsigned long cl,
					  struct netlink_ext_ack *extack)
{
	struct clsact_sched *q = qdisc_priv(sch);

	switch (cl) {
	case TC_H_MIN(TC_H_MIN_INGRESS):
		return q->hook[DIR_INGRESS].block;
	case TC_H_MIN(TC_H_MIN_EGRESS):
		return q->hook[DIR_EGRESS].block;
	default:
		return NULL;
	}
}

/* clsact's classes are its two hooks, by the minors find() returns. */
static unsigned long clsact_dir_class(int dir)
{
	return TC_H_MIN(dir == DIR_INGRESS ? TC_H_MIN_INGRESS : TC_H_MIN_EGRESS);
}

static int clsact_class_dir(unsigned long cl)
{
	int dir;

	for (dir = 0; dir < NR_DIRS; dir++)
		if (clsact_dir_class(dir) == cl)
			return dir;
	return -1;
}

static void clsact_walk(struct Qdisc *sch, struct qdisc_walker *arg)
{
	int dir;

	if (arg->stop)
		return;
	for (dir = 0; dir < NR_DIRS; dir++)
		if (!tc_qdisc_stats_dump(sch, clsact_dir_class(dir), arg))
			return;
}

static int clsact_dump_class(struct Qdisc *sch, unsigned long cl,
			     struct sk_buff *skb, struct tcmsg *tcm)
{
	int dir = clsact_class_dir(cl);

	if (dir < 0)
		return -1;
	tcm->tcm_parent = TC_H_ROOT;
	tcm->tcm_handle = TC_H_MAKE(sch->handle,
				    dir == DIR_INGRESS ? TC_H_MIN_INGRESS : TC_H_MIN_EGRESS);
	tcm->tcm_info = 0;
	return skb->len;
}

static int clsact_dump_class_stats(struct Qdisc *sch, unsigned long cl,
				   struct gnet_dump *d)
{
	struct clsact_sched *q = qdisc_priv(sch);
	int dir = clsact_class_dir(cl);

	if (dir < 0)
		return -1;
	if (gnet_stats_copy_basic(d, &q->stats->pcpu->bstats[dir], NULL, false) < 0 ||
	    gnet_stats_copy_queue(d, &q->stats->pcpu->qstats[dir], NULL, 0) < 0)
		return -1;
	return 0;
}

static void ingress_block_set(struct Qdisc *sch, u32 index)
{
	struct clsact_sched *q = qdisc_priv(sch);

	q->hook[DIR_INGRESS].block_info.block_index = index;
}

static void egress_block_set(struct Qdisc *sch, u32 index)
{
	struct clsact_sched *q = qdisc_priv(sch);

	q->hook[DIR_EGRESS].block_info.block_index = index;
}

static u32 ingress_block_get(struct Qdisc *sch)
{
	struct clsact_sched *q = qdisc_priv(sch);

	return q->hook[DIR_INGRESS].block_info.block_index;
}

static u32 egress_block_get(struct Qdisc *sch)
{
	struct clsact_sched *q = qdisc_priv(sch);

	return q->hook[DIR_EGRESS].block_info.block_index;
}

static void ingress_walk(struct Qdisc *sch, struct qdisc_walker *arg)
{
}

/* One direction only, whose counters are the qdisc's: no classes to show,
 * as with the tree's module.
 */
static const struct Qdisc_class_ops ingress_class_ops = {
	/* Filters are added and removed without RTNL, as in the tree. */
	.flags		= QDISC_CLASS_OPS_DOIT_UNLOCKED,
	.leaf		= clsact_leaf,
	.find		= ingress_find,
	.walk		= ingress_walk,
	.tcf_block	= ingress_tcf_block,
	.bind_tcf	= ingress_bind_tcf,
	.unbind_tcf	= clsact_unbind_tcf,
};

static const struct Qdisc_class_ops clsact_class_ops = {
	.flags		= QDISC_CLASS_OPS_DOIT_UNLOCKED,
	.leaf		= clsact_leaf,
	.find		= clsact_find,
	.walk		= clsact_walk,
	.tcf_block	= clsact_tcf_block,
	.bind_tcf	= clsact_bind_tcf,
	.unbind_tcf	= clsact_unbind_tcf,
	.dump		= clsact_dump_class,
	.dump_stats	= clsact_dump_class_stats,
};

/* No TCQ_F_CPUSTATS: the per-CPU counters are per direction (above). */
static struct Qdisc_ops ingress_ops __read_mostly = {
	.cl_ops			= &ingress_class_ops,
	.id			= "ingress",
	.priv_size		= sizeof(struct clsact_sched),
	.static_flags		= TCQ_F_INGRESS,
	.init			= clsact_init,
	.destroy		= clsact_destroy,
	.dump			= clsact_dump,
	.ingress_block_set	= ingress_block_set,
	.ingress_block_get	= ingress_block_get,
	.owner			= THIS_MODULE,
};

static struct Qdisc_ops clsact_ops __read_mostly = {
	.cl_ops			= &clsact_class_ops,
	.id			= "clsact",
	.priv_size		= sizeof(struct clsact_sched),
	.static_flags		= TCQ_F_INGRESS,
	.init			= clsact_init,
	.destroy		= clsact_destroy,
	.dump			= clsact_dump,
	.ingress_block_set	= ingress_block_set,
	.egress_block_set	= egress_block_set,
	.ingress_block_get	= ingress_block_get,
	.egress_block_get	= egress_block_get,
	.owner			= THIS_MODULE,
};

static int __init sch_clsact_init(void)
{
	int err = register_qdisc(&ingress_ops);

	if (err)
		return err;
	err = register_qdisc(&clsact_ops);
	if (err)
		unregister_qdisc(&ingress_ops);
	return err;
}

static void __exit sch_clsact_exit(void)
{
	unregister_qdisc(&clsact_ops);
	unregister_qdisc(&ingress_ops);
	/* Counters of destroyed qdiscs are freed from RCU callbacks. */
	rcu_barrier();
}

module_init(sch_clsact_init);
module_exit(sch_clsact_exit);
MODULE_ALIAS_NET_SCH("ingress");
MODULE_ALIAS_NET_SCH("clsact");
MODULE_DESCRIPTION("lk45: ingress and clsact qdiscs with per-direction statistics");
MODULE_LICENSE("GPL");
