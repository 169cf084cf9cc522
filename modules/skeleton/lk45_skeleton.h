/* SPDX-License-Identifier: GPL-2.0 */
#ifndef LK45_SKELETON_H
#define LK45_SKELETON_H

#include <linux/types.h>

size_t lk45_skeleton_sum(size_t a, size_t b);

#endif
