// SPDX-License-Identifier: GPL-2.0
/*
 * Deliberately broken module for the bench's self-test. Each mode provokes
 * one class of kernel report that 'make check' must turn into a failure.
 * Never loaded by a normal run.
 */
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>

static char *mode = "none";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "bug, kasan, lockdep or warn");

static DEFINE_MUTEX(fault_a);
static DEFINE_MUTEX(fault_b);

static noinline void fault_kasan(void)
{
	volatile char *p = kmalloc(16, GFP_KERNEL);

	if (!p)
		return;
	/* One byte past the object: KASAN must report a slab-out-of-bounds. */
	pr_info("lk45_bench_fault: read %d\n", p[16]);
	kfree((void *)p);
}

static noinline void fault_lockdep(void)
{
	/* A then B, later B then A: lockdep must report a possible deadlock. */
	mutex_lock(&fault_a);
	mutex_lock(&fault_b);
	mutex_unlock(&fault_b);
	mutex_unlock(&fault_a);

	mutex_lock(&fault_b);
	mutex_lock(&fault_a);
	mutex_unlock(&fault_a);
	mutex_unlock(&fault_b);
}

static int __init lk45_bench_fault_init(void)
{
	pr_info("lk45_bench_fault: mode=%s\n", mode);
	if (!strcmp(mode, "bug"))
		BUG();
	else if (!strcmp(mode, "kasan"))
		fault_kasan();
	else if (!strcmp(mode, "lockdep"))
		fault_lockdep();
	else if (!strcmp(mode, "warn"))
		WARN_ON(1);
	return 0;
}

static void __exit lk45_bench_fault_exit(void)
{
}

module_init(lk45_bench_fault_init);
module_exit(lk45_bench_fault_exit);
MODULE_DESCRIPTION("lk45 bench self-test: provokes kernel reports on purpose");
MODULE_LICENSE("GPL");
