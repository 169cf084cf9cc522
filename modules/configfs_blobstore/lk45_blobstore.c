// SPDX-License-Identifier: GPL-2.0
/*
 * A small blob store in configfs, the consumer of configfs binary
 * attributes that the bench's tests, demo and benchmark drive.
 *
 * mkdir /sys/kernel/config/lk45_blobstore/NAME creates a store with:
 *  blob      RW  any bytes up to max_blob; each commit replaces them
 *  image     WO  a validated upload (see struct lk45_image_hdr); a rejected
 *                one fails fsync(2) and leaves the stored blob as it was
 *  digest    RO  struct lk45_digest of the stored blob
 *  readonly  -   mode 0644 but no write method: configfs refuses writers
 *  commits, rejects  text counters
 *  read_mode RW  how blob's read method answers the call that fills the
 *                buffer: "normal"; "shrink" (fills and returns half the
 *                blob, as if it shrank since it was sized); "overclaim"
 *                (fills the buffer, returns one byte more than its length);
 *                "empty" (fills nothing, returns 0, as if it emptied)
 */
#include <linux/configfs.h>
#include <linux/crc32.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>

static unsigned long max_blob = 64 << 20;
module_param(max_blob, ulong, 0444);
MODULE_PARM_DESC(max_blob, "largest blob, in bytes (cb_max_size of blob)");

#define LK45_IMAGE_MAX		SZ_1M
#define LK45_IMAGE_MAGIC	"LK45"

/* An image: this header, len bytes of payload, then crc32_le(~0, payload)
 * as __le32. All fields little endian.
 */
struct lk45_image_hdr {
	char magic[4];
	__le32 len;
} __packed;

struct lk45_digest {
	__le64 size;
	__le32 crc;		/* crc32_le(~0, blob) */
	__le32 commits;
} __packed;

enum lk45_read_mode {
	LK45_READ_NORMAL,
	LK45_READ_SHRINK,
	LK45_READ_OVERCLAIM,
	LK45_READ_EMPTY,
};

static const char * const lk45_read_modes[] = {
	[LK45_READ_NORMAL] = "normal",
	[LK45_READ_SHRINK] = "shrink",
	[LK45_READ_OVERCLAIM] = "overclaim",
	[LK45_READ_EMPTY] = "empty",
};

struct lk45_store {
	struct config_item item;
	struct mutex lock;	/* blob, size, counters and read_mode */
	void *blob;
	size_t size;
	u32 commits;
	u32 rejects;
	enum lk45_read_mode read_mode;
};

static struct lk45_store *to_store(struct config_item *item)
{
	return container_of(item, struct lk45_store, item);
}

/* Replace the stored blob by a copy of @data; the old one stays on error. */
static ssize_t lk45_store_replace(struct lk45_store *st, const void *data,
				  size_t size)
{
	void *copy = NULL;

	if (size) {
		copy = kvmemdup(data, size, GFP_KERNEL_ACCOUNT);
		if (!copy)
			return -ENOMEM;
	}
	mutex_lock(&st->lock);
	kvfree(st->blob);
	st->blob = copy;
	st->size = size;
	st->commits++;
	mutex_unlock(&st->lock);
	return size;
}

static ssize_t lk45_blob_read(struct config_item *item, void *buf, size_t len)
{
	struct lk45_store *st = to_store(item);
	ssize_t ret;

	mutex_lock(&st->lock);
	ret = st->size;
	if (buf && len < st->size && st->read_mode == LK45_READ_NORMAL) {
		/* Grown since configfs asked the size: never hand out a part. */
		ret = -EAGAIN;
	} else if (buf) {
		size_t n = min(len, st->size);

		/* Misbehave on purpose, for the tests of configfs' reader. */
		if (st->read_mode == LK45_READ_SHRINK)
			n = min(len, st->size / 2);
		if (st->read_mode == LK45_READ_EMPTY)
			n = 0;
		memcpy(buf, st->blob, n);
		ret = n;
		if (st->read_mode == LK45_READ_OVERCLAIM)
			ret = len + 1;
	}
	mutex_unlock(&st->lock);
	return ret;
}

static ssize_t lk45_blob_write(struct config_item *item, const void *data,
			       size_t size)
{
	return lk45_store_replace(to_store(item), data, size);
}

static int lk45_image_check(const void *data, size_t size)
{
	const struct lk45_image_hdr *hdr = data;
	__le32 crc;
	size_t len;

	if (size < sizeof(*hdr) + sizeof(crc) ||
	    memcmp(hdr->magic, LK45_IMAGE_MAGIC, sizeof(hdr->magic)))
		return -EINVAL;
	len = le32_to_cpu(hdr->len);
	if (len != size - sizeof(*hdr) - sizeof(crc))
		return -EMSGSIZE;
	memcpy(&crc, data + sizeof(*hdr) + len, sizeof(crc));
	if (le32_to_cpu(crc) != crc32_le(~0, data + sizeof(*hdr), len))
		return -EBADMSG;
	return 0;
}

static ssize_t lk45_image_write(struct config_item *item, const void *data,
				size_t size)
{
	struct lk45_store *st = to_store(item);
	int err = lk45_image_check(data, size);

	if (err) {
		mutex_lock(&st->lock);
		st->rejects++;
		mutex_unlock(&st->lock);
		return err;
	}
	return lk45_store_replace(st, data + sizeof(struct lk45_image_hdr),
				  size - sizeof(struct lk45_image_hdr) - sizeof(__le32));
}

static ssize_t lk45_digest_read(struct config_item *item, void *buf, size_t len)
{
	struct lk45_store *st = to_store(item);
	struct lk45_digest d;

	if (!buf)
		return sizeof(d);
	if (len < sizeof(d))
		return -EINVAL;
	mutex_lock(&st->lock);
	d.size = cpu_to_le64(st->size);
	d.crc = cpu_to_le32(crc32_le(~0, st->blob, st->size));
	d.commits = cpu_to_le32(st->commits);
	mutex_unlock(&st->lock);
	memcpy(buf, &d, sizeof(d));
	return sizeof(d);
}

static ssize_t lk45_counter_show(u32 *counter, struct lk45_store *st, char *page)
{
	u32 v;

	mutex_lock(&st->lock);
	v = *counter;
	mutex_unlock(&st->lock);
	return sysfs_emit(page, "%u\n", v);
}

static ssize_t lk45_commits_show(struct config_item *item, char *page)
{
	return lk45_counter_show(&to_store(item)->commits, to_store(item), page);
}

static ssize_t lk45_rejects_show(struct config_item *item, char *page)
{
	return lk45_counter_show(&to_store(item)->rejects, to_store(item), page);
}

static ssize_t lk45_read_mode_show(struct config_item *item, char *page)
{
	struct lk45_store *st = to_store(item);
	enum lk45_read_mode mode;

	mutex_lock(&st->lock);
	mode = st->read_mode;
	mutex_unlock(&st->lock);
	return sysfs_emit(page, "%s\n", lk45_read_modes[mode]);
}

static ssize_t lk45_read_mode_store(struct config_item *item, const char *page,
				    size_t count)
{
	struct lk45_store *st = to_store(item);
	int mode = sysfs_match_string(lk45_read_modes, page);

	if (mode < 0)
		return mode;
	mutex_lock(&st->lock);
	st->read_mode = mode;
	mutex_unlock(&st->lock);
	return count;
}

/* cb_max_size follows the module parameter, so it is set at load. */
CONFIGFS_BIN_ATTR(lk45_, blob, NULL, 0);
CONFIGFS_BIN_ATTR_WO(lk45_, image, NULL, LK45_IMAGE_MAX);
CONFIGFS_BIN_ATTR_RO(lk45_, digest, NULL, sizeof(struct lk45_digest));
CONFIGFS_ATTR_RO(lk45_, commits);
CONFIGFS_ATTR_RO(lk45_, rejects);
CONFIGFS_ATTR(lk45_, read_mode);

/* Writable by its mode, but without a write method. */
static struct configfs_bin_attribute lk45_attr_readonly = {
	.cb_attr = {
		.ca_name = "readonly",
		.ca_owner = THIS_MODULE,
		.ca_mode = 0644,
	},
	.cb_max_size = sizeof(struct lk45_digest),
	.read = lk45_digest_read,
};

static struct configfs_bin_attribute *lk45_bin_attrs[] = {
	&lk45_attr_blob,
	&lk45_attr_image,
	&lk45_attr_digest,
	&lk45_attr_readonly,
	NULL,
};

static struct configfs_attribute *lk45_attrs[] = {
	&lk45_attr_commits,
	&lk45_attr_rejects,
	&lk45_attr_read_mode,
	NULL,
};

static void lk45_store_release(struct config_item *item)
{
	struct lk45_store *st = to_store(item);

	kvfree(st->blob);
	mutex_destroy(&st->lock);
	kfree(st);
}

static struct configfs_item_operations lk45_store_ops = {
	.release = lk45_store_release,
};

static const struct config_item_type lk45_store_type = {
	.ct_item_ops = &lk45_store_ops,
	.ct_bin_attrs = lk45_bin_attrs,
	.ct_attrs = lk45_attrs,
	.ct_owner = THIS_MODULE,
};

static struct config_item *lk45_make_store(struct config_group *group,
					   const char *name)
{
	struct lk45_store *st = kzalloc(sizeof(*st), GFP_KERNEL);

	if (!st)
		return ERR_PTR(-ENOMEM);
	mutex_init(&st->lock);
	config_item_init_type_name(&st->item, name, &lk45_store_type);
	return &st->item;
}

static struct configfs_group_operations lk45_group_ops = {
	.make_item = lk45_make_store,
};

static const struct config_item_type lk45_subsys_type = {
	.ct_group_ops = &lk45_group_ops,
	.ct_owner = THIS_MODULE,
};

static struct configfs_subsystem lk45_subsys = {
	.su_group = {
		.cg_item = {
			.ci_namebuf = "lk45_blobstore",
			.ci_type = &lk45_subsys_type,
		},
	},
};

static int __init lk45_blobstore_init(void)
{
	lk45_attr_blob.cb_max_size = max_blob;
	config_group_init(&lk45_subsys.su_group);
	mutex_init(&lk45_subsys.su_mutex);
	return configfs_register_subsystem(&lk45_subsys);
}

static void __exit lk45_blobstore_exit(void)
{
	configfs_unregister_subsystem(&lk45_subsys);
}

module_init(lk45_blobstore_init);
module_exit(lk45_blobstore_exit);
MODULE_DESCRIPTION("lk45: a blob store on configfs binary attributes");
MODULE_LICENSE("GPL");
