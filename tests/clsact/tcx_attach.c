// SPDX-License-Identifier: GPL-2.0
/*
 * tcx_attach DEV ingress|egress PIN: attach a no-op program (return 0,
 * TCX_PASS, as the tc benchmarks' "nop" filter returns TC_ACT_OK) to DEV's
 * tcx hook with BPF_LINK_CREATE, and pin the link at PIN in bpffs so that
 * it outlives this process. "rm PIN" detaches it. tc 6.1 cannot attach
 * tcx programs, and Debian 12's libbpf predates tcx, so this is raw bpf(2).
 */
#include <errno.h>
#include <linux/bpf.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* enum bpf_attach_type in 6.6+ (Debian 12's headers are 6.1's) */
#define TCX_INGRESS 46
#define TCX_EGRESS 47

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

int main(int argc, char **argv)
{
	struct bpf_insn prog[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	char log[4096] = "";
	union bpf_attr attr;
	unsigned int ifindex;
	int prog_fd, link_fd;

	if (argc != 4 || (strcmp(argv[2], "ingress") && strcmp(argv[2], "egress"))) {
		fprintf(stderr, "usage: %s DEV ingress|egress PIN\n", argv[0]);
		return 2;
	}
	ifindex = if_nametoindex(argv[1]);
	if (!ifindex) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(errno));
		return 1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	attr.insns = (uintptr_t)prog;
	attr.insn_cnt = sizeof(prog) / sizeof(prog[0]);
	attr.license = (uintptr_t)"GPL";
	attr.log_buf = (uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	prog_fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (prog_fd < 0) {
		fprintf(stderr, "BPF_PROG_LOAD: %s\n%s", strerror(errno), log);
		return 1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.link_create.prog_fd = prog_fd;
	attr.link_create.target_ifindex = ifindex;
	attr.link_create.attach_type = strcmp(argv[2], "ingress") ? TCX_EGRESS : TCX_INGRESS;
	link_fd = sys_bpf(BPF_LINK_CREATE, &attr);
	if (link_fd < 0) {
		fprintf(stderr, "BPF_LINK_CREATE tcx %s on %s: %s\n", argv[2], argv[1], strerror(errno));
		return 1;
	}

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uintptr_t)argv[3];
	attr.bpf_fd = link_fd;
	if (sys_bpf(BPF_OBJ_PIN, &attr)) {
		fprintf(stderr, "BPF_OBJ_PIN %s: %s\n", argv[3], strerror(errno));
		return 1;
	}
	return 0;
}
