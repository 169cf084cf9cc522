// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * The ingress and clsact qdiscs, as an out-of-tree module that stands in
 * for the tree's sch_ingress.ko.
 *
 * Neither qdisc queues anything. Each is a holder of classifier blocks
 * that the core runs from its hooks in net/core/dev.c: "ingress" one
 * block at the receive hook, "clsact" one at the receive hook and one at
 * the transmit hook, before the root qdisc and without its lock. A block
 * reaches the hook through the device's tcx entry, whose mini_Qdisc the
 * block's chain head is published to.
 *
 * The hook's static key is wanted only while the block has filters on
 * chain 0 (the only chain the hook starts from), so a device without
 * either qdisc, or with one but no filters, costs nothing per packet. The
 * tree's module holds the key for as long as the qdisc exists. A key is
 * taken at once when wanted, but given back only release_delay_ms after
 * the last time a direction stopped wanting one: each change of a key
 * rewrites kernel text on every CPU, and anyone with CAP_NET_ADMIN in a
 * user namespace can add and delete a filter in a loop. Until then an
 * empty qdisc still costs the hook's test of a NULL chain.
 *
 * With each key the module also holds the core's tcf_sw_enabled_key, which
 * the core itself changes whenever a block gains its first software filter
 * or loses its last. The price: while a qdisc here has filters, blocks whose
 * filters are all skip_sw are tested per packet, as before that key existed.
 *
 * This is the backport, for kernels without them, of two changes to the
 * kernel itself: "net/sched: ingress, clsact: take a hook's static key only
 * while it has filters" (the key follows chain 0 in each direction:
 * clsact_head_change() here, ingress_hook_key() in sch_ingress.c) and "net:
 * turn off the tc hooks' static keys only after a delay" (the core defers
 * the hooks' keys and tcf_sw_enabled_key by a second: keys_held and
 * keys_release_work here). On a kernel with both the core bounds the
 * changes of tcf_sw_enabled_key itself, and the module leaves it alone
 * (HAVE_DEFERRED_TC_KEYS); its own delay then comes on top of the core's.
 * test_clsact_hook_keys checks that the tree's module and this one hold
 * the same keys once their delays have passed.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <net/netlink.h>
#include <net/pkt_cls.h>
#include <net/pkt_sched.h>
#include <net/tcx.h>

#if !IS_ENABLED(CONFIG_NET_CLS_ACT)
#error "the hooks' classifier path needs CONFIG_NET_CLS_ACT"
#endif

/* The longest release delay accepted: an hour. */
#define RELEASE_DELAY_MAX_MS	3600000

enum { DIR_INGRESS, DIR_EGRESS, NR_DIRS };

/* One direction's hook: what init took, so that destroy, which also runs
 * after a failed init, gives back exactly that.
 */
struct clsact_hook {
	struct tcf_block *block;
	struct tcf_block_ext_info block_info;
	struct mini_Qdisc_pair miniqp;
	int dir;
	/* Chain 0 has filters, so the hook's key is wanted. Changed by the
	 * block's chain head changes, which the block serializes per qdisc.
	 */
	bool key_wanted;
	bool entry_held;	/* a reference in the device's tcx entry */
};

struct clsact_sched {
	struct clsact_hook hook[NR_DIRS];
};

/*
 * The module's references on the core's two hook keys, each with one on
 * tcf_sw_enabled_key. keys_held[] follows keys_wanted[] up at once and down
 * from a delayed work, pushed back by every put, so a loop of filter or
 * qdisc changes keeps the keys until it stops. keys_lock covers the counts,
 * the delay's changes and the scheduling of the work.
 */
static DEFINE_MUTEX(keys_lock);
static unsigned int keys_wanted[NR_DIRS];
static unsigned int keys_held[NR_DIRS];
static unsigned long key_changes;
static unsigned int release_delay_ms = 1000;

static void clsact_keys_release(struct work_struct *work);
static DECLARE_DELAYED_WORK(keys_release_work, clsact_keys_release);

static int clsact_param_keys(char *buf, const struct kernel_param *kp)
{
	const unsigned int *keys = kp->arg;
	unsigned int n;

	mutex_lock(&keys_lock);
	n = keys[DIR_INGRESS] + keys[DIR_EGRESS];
	mutex_unlock(&keys_lock);
	return sysfs_emit(buf, "%u\n", n);
}

static const struct kernel_param_ops keys_ops = {
	.get = clsact_param_keys,
};
static int clsact_param_changes(char *buf, const struct kernel_param *kp)
{
	return sysfs_emit(buf, "%lu\n", READ_ONCE(key_changes));
}

static const struct kernel_param_ops changes_ops = {
	.get = clsact_param_changes,
};

/* Other namespaces' filter activity is not everyone's business. */
module_param_cb(keys_wanted, &keys_ops, keys_wanted, 0400);
MODULE_PARM_DESC(keys_wanted, "qdisc directions with filters, each wanting its hook's static key");
module_param_cb(keys_held, &keys_ops, keys_held, 0400);
MODULE_PARM_DESC(keys_held, "references held on the ingress and egress hooks' static keys");
module_param_cb(key_changes, &changes_ops, &key_changes, 0400);
MODULE_PARM_DESC(key_changes, "static key references taken or given back since load");

static bool clsact_release_owed(void)
{
	lockdep_assert_held(&keys_lock);
	return keys_held[DIR_INGRESS] > keys_wanted[DIR_INGRESS] ||
	       keys_held[DIR_EGRESS] > keys_wanted[DIR_EGRESS];
}

/* A new delay applies to a release already owed, too. */
static int clsact_param_set_delay(const char *val, const struct kernel_param *kp)
{
	unsigned int ms;
	int err;

	err = kstrtouint(val, 0, &ms);
	if (err)
		return err;
	if (ms > RELEASE_DELAY_MAX_MS)
		return -EINVAL;
	mutex_lock(&keys_lock);
	WRITE_ONCE(release_delay_ms, ms);
	if (clsact_release_owed())
		mod_delayed_work(system_wq, &keys_release_work, msecs_to_jiffies(ms));
	mutex_unlock(&keys_lock);
	return 0;
}

static const struct kernel_param_ops delay_ops = {
	.set = clsact_param_set_delay,
	.get = param_get_uint,
};
module_param_cb(release_delay_ms, &delay_ops, &release_delay_ms, 0644);
MODULE_PARM_DESC(release_delay_ms, "delay before an unwanted static key is given back (0: at once, at most 3600000)");

#ifdef HAVE_DEFERRED_TC_KEYS
static void clsact_sw_key(bool take)
{
}
#else
static void clsact_sw_key(bool take)
{
	BUILD_BUG_ON(!__same_type(tcf_sw_enabled_key, struct static_key_false));
	if (take)
		static_branch_inc(&tcf_sw_enabled_key);
	else
		static_branch_dec(&tcf_sw_enabled_key);
}
#endif

static void clsact_key_ref(int dir, bool take)
{
	lockdep_assert_held(&keys_lock);
	if (take) {
		clsact_sw_key(true);
		if (dir == DIR_INGRESS)
			net_inc_ingress_queue();
		else
			net_inc_egress_queue();
		keys_held[dir]++;
	} else {
		if (dir == DIR_INGRESS)
			net_dec_ingress_queue();
		else
			net_dec_egress_queue();
		clsact_sw_key(false);
		keys_held[dir]--;
	}
	WRITE_ONCE(key_changes, key_changes + 1);
}

static void clsact_keys_trim(void)
{
	int dir;

	lockdep_assert_held(&keys_lock);
	for (dir = 0; dir < NR_DIRS; dir++)
		while (keys_held[dir] > keys_wanted[dir])
			clsact_key_ref(dir, false);
}

static void clsact_keys_release(struct work_struct *work)
{
	mutex_lock(&keys_lock);
	clsact_keys_trim();
	mutex_unlock(&keys_lock);
}

static void clsact_key_get(struct clsact_hook *h)
{
	if (h->key_wanted)
		return;
	mutex_lock(&keys_lock);
	keys_wanted[h->dir]++;
	if (keys_held[h->dir] < keys_wanted[h->dir])
		clsact_key_ref(h->dir, true);
	mutex_unlock(&keys_lock);
	h->key_wanted = true;
}

static void clsact_key_put(struct clsact_hook *h)
{
	if (!h->key_wanted)
		return;
	h->key_wanted = false;
	mutex_lock(&keys_lock);
	keys_wanted[h->dir]--;
	if (!release_delay_ms)
		clsact_keys_trim();
	else
		mod_delayed_work(system_wq, &keys_release_work,
				 msecs_to_jiffies(release_delay_ms));
	mutex_unlock(&keys_lock);
}

static struct Qdisc_ops ingress_ops;

static unsigned int nr_dirs(const struct Qdisc *sch)
{
	return sch->ops == &ingress_ops ? 1 : NR_DIRS;
}

/* Called with chain 0's new first filter, or NULL when chain 0 empties (or
 * this qdisc leaves a block that has filters). The key follows chain 0,
 * whether or not the mini_Qdisc is published yet (a core that publishes
 * only once the qdisc is grafted does it from clsact_attach()); the hook
 * copes with a NULL mini_Qdisc either way.
 */
static void clsact_head_change(struct tcf_proto *tp_head, void *priv)
{
	struct clsact_hook *h = priv;
#ifdef HAVE_MINI_QDISC_PAIR_ATTACH
	/* The core publishes only once the qdisc is grafted (clsact_attach())
	 * and withdraws only this qdisc's own mini_Qdisc.
	 */
	mini_qdisc_pair_swap(&h->miniqp, tp_head);
#else
	struct mini_Qdisc *cur;

	/*
	 * The hook's pointer is the device's, not this qdisc's: a qdisc
	 * replacing this one binds its blocks, and so publishes its own
	 * mini_Qdisc if they hold filters, before this one is destroyed.
	 * Withdraw only our own. A replace that fails after binding still
	 * withdraws the pointer of the qdisc that stays: only the core can
	 * mend that.
	 */
	cur = rcu_dereference_protected(*h->miniqp.p_miniq, 1);
	if (tp_head || !cur || cur == &h->miniqp.miniq1 || cur == &h->miniqp.miniq2)
		mini_qdisc_pair_swap(&h->miniqp, tp_head);
#endif
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

	h->dir = dir;
	entry = tcx_entry_fetch_or_create(dev, ingress, &created);
	if (!entry) {
		NL_SET_ERR_MSG(extack, "no memory for the device's tcx entry");
		return -ENOMEM;
	}
	tcx_miniq_inc(entry);
	h->entry_held = true;
	/* Both hooks count into the qdisc's per-CPU counters. */
	mini_qdisc_pair_init(&h->miniqp, sch, &tcx_entry(entry)->miniq);
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

	for (dir = 0; dir < nr_dirs(sch); dir++) {
		err = clsact_hook_init(sch, q, dir, extack);
		if (err)
			return err;	/* the core calls ->destroy() */
		mini_qdisc_pair_block_init(&q->hook[dir].miniqp, q->hook[dir].block);
	}
	return 0;
}

#ifdef HAVE_MINI_QDISC_PAIR_ATTACH
/* Grafted, the old qdisc gone: publish the hooks' chains. */
static void clsact_attach(struct Qdisc *sch)
{
	struct clsact_sched *q = qdisc_priv(sch);
	unsigned int dir;

	for (dir = 0; dir < nr_dirs(sch); dir++)
		mini_qdisc_pair_attach(&q->hook[dir].miniqp, q->hook[dir].block);
}
#define CLSACT_ATTACH	clsact_attach
#else
#define CLSACT_ATTACH	NULL
#endif

static void clsact_destroy(struct Qdisc *sch)
{
	struct clsact_sched *q = qdisc_priv(sch);
	unsigned int dir;

	for (dir = 0; dir < nr_dirs(sch); dir++)
		clsact_hook_destroy(sch, q, dir);
}

/* No options; the core dumps the counters, and the estimator reads the
 * same per-CPU counters the hooks update.
 */
static int clsact_dump(struct Qdisc *sch, struct sk_buff *skb)
{
	struct nlattr *nest = nla_nest_start_noflag(skb, TCA_OPTIONS);

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

/* No classes to show: the hooks count only into the qdisc. */
static void clsact_walk(struct Qdisc *sch, struct qdisc_walker *arg)
{
}

static const struct Qdisc_class_ops ingress_class_ops = {
	/* Filters are added and removed without RTNL, as in the tree. */
	.flags		= QDISC_CLASS_OPS_DOIT_UNLOCKED,
	.leaf		= clsact_leaf,
	.find		= ingress_find,
	.walk		= clsact_walk,
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
};

static struct Qdisc_ops ingress_ops __read_mostly = {
	.cl_ops			= &ingress_class_ops,
	.id			= "ingress",
	.priv_size		= sizeof(struct clsact_sched),
	.static_flags		= TCQ_F_INGRESS | TCQ_F_CPUSTATS,
	.init			= clsact_init,
	.destroy		= clsact_destroy,
	.attach			= CLSACT_ATTACH,
	.dump			= clsact_dump,
	.ingress_block_set	= ingress_block_set,
	.ingress_block_get	= ingress_block_get,
	.owner			= THIS_MODULE,
};

static struct Qdisc_ops clsact_ops __read_mostly = {
	.cl_ops			= &clsact_class_ops,
	.id			= "clsact",
	.priv_size		= sizeof(struct clsact_sched),
	.static_flags		= TCQ_F_INGRESS | TCQ_F_CPUSTATS,
	.init			= clsact_init,
	.destroy		= clsact_destroy,
	.attach			= CLSACT_ATTACH,
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
	/* Every qdisc is gone, so nothing is wanted: give back what is held.
	 * Disabled, the work cannot be queued again by a write of
	 * release_delay_ms racing with the unload.
	 */
	disable_delayed_work_sync(&keys_release_work);
	WARN_ON_ONCE(keys_wanted[DIR_INGRESS] || keys_wanted[DIR_EGRESS]);
	clsact_keys_release(NULL);
}

module_init(sch_clsact_init);
module_exit(sch_clsact_exit);
MODULE_ALIAS_NET_SCH("ingress");
MODULE_ALIAS_NET_SCH("clsact");
MODULE_DESCRIPTION("ingress and clsact qdiscs, hook static keys taken only while filters exist");
MODULE_LICENSE("GPL");
