// SPDX-License-Identifier: GPL-2.0
/*
 * Smallest useful out-of-tree module: a counter in sysfs
 * (/sys/module/lk45_skeleton/parameters/loads) and one exported helper, so
 * the bench can prove that building, loading, linking against and
 * unloading our modules works.
 */
#include <linux/module.h>
#include <linux/overflow.h>

#include "lk45_skeleton.h"

static unsigned int loads;
module_param(loads, uint, 0444);
MODULE_PARM_DESC(loads, "1 while the module is loaded");

/**
 * lk45_skeleton_sum() - add two sizes, saturating instead of wrapping
 * @a: first addend
 * @b: second addend
 *
 * Return: @a + @b, or SIZE_MAX when the sum does not fit in a size_t.
 */
size_t lk45_skeleton_sum(size_t a, size_t b)
{
	size_t sum;

	if (check_add_overflow(a, b, &sum))
		return SIZE_MAX;
	return sum;
}
EXPORT_SYMBOL_GPL(lk45_skeleton_sum);

static int __init lk45_skeleton_init(void)
{
	loads = 1;
	pr_info("lk45_skeleton: loaded\n");
	return 0;
}

static void __exit lk45_skeleton_exit(void)
{
	pr_info("lk45_skeleton: unloaded\n");
}

module_init(lk45_skeleton_init);
module_exit(lk45_skeleton_exit);
MODULE_DESCRIPTION("lk45 bench skeleton module");
MODULE_LICENSE("GPL");
