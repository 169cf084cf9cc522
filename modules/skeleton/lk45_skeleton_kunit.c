// SPDX-License-Identifier: GPL-2.0
/* KUnit suite for the skeleton: proves out-of-tree KUnit modules run. */
#include <kunit/test.h>
#include <linux/limits.h>

#include "lk45_skeleton.h"

static void sum_small(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, lk45_skeleton_sum(2, 3), (size_t)5);
	KUNIT_EXPECT_EQ(test, lk45_skeleton_sum(0, 0), (size_t)0);
}

static void sum_saturates(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, lk45_skeleton_sum(SIZE_MAX, 1), SIZE_MAX);
	KUNIT_EXPECT_EQ(test, lk45_skeleton_sum(SIZE_MAX - 1, 1), SIZE_MAX);
	KUNIT_EXPECT_EQ(test, lk45_skeleton_sum(SIZE_MAX / 2 + 1, SIZE_MAX / 2 + 1),
			SIZE_MAX);
}

static struct kunit_case lk45_skeleton_cases[] = {
	KUNIT_CASE(sum_small),
	KUNIT_CASE(sum_saturates),
	{}
};

static struct kunit_suite lk45_skeleton_suite = {
	.name = "lk45_skeleton",
	.test_cases = lk45_skeleton_cases,
};
kunit_test_suite(lk45_skeleton_suite);

MODULE_DESCRIPTION("KUnit tests for the lk45 bench skeleton");
MODULE_LICENSE("GPL");
