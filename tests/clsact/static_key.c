// SPDX-License-Identifier: GPL-2.0
/*
 * static_key SYMBOL...: print each static key's count of references
 * ("SYMBOL COUNT"), read from the running kernel through /proc/kcore at
 * the address /proc/kallsyms gives (CONFIG_KALLSYMS_ALL, CONFIG_PROC_KCORE).
 * The count is the first member of a static key, also of a deferred one.
 * Exits 1 with a message when a symbol or its memory cannot be read.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void __attribute__((noreturn)) die(const char *what, const char *name)
{
	fprintf(stderr, "static_key: %s%s%s\n", what, name ? ": " : "", name ? name : "");
	exit(1);
}

/* Each name's address, from one pass over /proc/kallsyms. */
static void sym_addrs(int n, char **names, unsigned long long *addrs)
{
	char line[512], sym[256], type;
	unsigned long long addr;
	FILE *f = fopen("/proc/kallsyms", "r");
	int i;

	if (!f)
		die("cannot open /proc/kallsyms", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		/* module symbols carry a "[module]" column: only the kernel's */
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3 || strchr(line, '['))
			continue;
		for (i = 0; i < n; i++) {
			if (!addrs[i] && !strcmp(sym, names[i])) {
				if (!addr)
					die("kallsyms hides addresses (kptr_restrict)", names[i]);
				addrs[i] = addr;
			}
		}
	}
	fclose(f);
	for (i = 0; i < n; i++)
		if (!addrs[i])
			die("no such symbol in /proc/kallsyms", names[i]);
}

/* The file offset of a kernel virtual address, from kcore's PT_LOADs. */
static off_t kcore_offset(int fd, unsigned long long addr, size_t len)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	int i;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64)
		die("/proc/kcore is not a 64-bit ELF file", NULL);
	for (i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (off_t)i * eh.e_phentsize) != sizeof(ph))
			die("cannot read kcore's program headers", NULL);
		if (ph.p_type == PT_LOAD && addr >= ph.p_vaddr &&
		    addr + len <= ph.p_vaddr + ph.p_filesz)
			return (off_t)(ph.p_offset + (addr - ph.p_vaddr));
	}
	die("address not in /proc/kcore", NULL);
}

int main(int argc, char **argv)
{
	unsigned long long *addrs;
	int fd, i, count;

	if (argc < 2)
		die("usage: static_key SYMBOL...", NULL);
	fd = open("/proc/kcore", O_RDONLY);
	if (fd < 0)
		die("cannot open /proc/kcore", strerror(errno));
	addrs = calloc(argc, sizeof(*addrs));
	if (!addrs)
		die("out of memory", NULL);
	sym_addrs(argc - 1, argv + 1, addrs);
	for (i = 1; i < argc; i++) {
		if (pread(fd, &count, sizeof(count),
			  kcore_offset(fd, addrs[i - 1], sizeof(count))) != sizeof(count))
			die("cannot read the key", argv[i]);
		printf("%s %d\n", argv[i], count);
	}
	free(addrs);
	close(fd);
	return 0;
}
