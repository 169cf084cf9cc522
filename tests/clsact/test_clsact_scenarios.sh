#!/bin/bash
# bench-timeout: 600
# sch_clsact in the scenarios upstream fixed in the ingress/clsact code
# (2023-2024) and CVE-2024-41010, driven through raw rtnetlink (qdisc_nl)
# where tc's own argument checks would stop the request before the kernel,
# and filter requests racing qdisc replacement. Each ends in a clean error
# or a clean teardown; the bench fails the run on any kernel report.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
NL=$CLSACT_DIR/qdisc_nl
cleanup() {
	ip link del d0 2>/dev/null
	ip link del d1 2>/dev/null
	ip link del d2 2>/dev/null
	ip netns del cve 2>/dev/null
}
trap cleanup EXIT
cleanup
# nl_is WANT DESC ARGS...: qdisc_nl's answer, up to the extack message.
nl_is() {
	local want=$1 desc=$2 out
	shift 2
	out=$($NL "$@")
	is "${out%%:*}" "$want" "$desc"
	[ "$out" = "${out%%:*}" ] || diag "${out#*: }"
}
only_kind() { tc qdisc show dev "$1" | grep -cE "qdisc (ingress|clsact)"; }

modprobe sch_clsact && modprobe dummy && modprobe cls_matchall && modprobe act_gact
base=$(cat $PARAM)
ip link add d0 type dummy && ip link set d0 up
tc qdisc add dev d0 root handle 1: prio

nl_is EOPNOTSUPP "ingress under prio class 1:1 (not the ingress parent)" -p 1:1 -H 2:0 d0 ingress
nl_is EOPNOTSUPP "clsact under prio class 1:2" -p 1:2 -H 3:0 d0 clsact
ip link add d2 type dummy
nl_is EOPNOTSUPP "ingress as root (of a device without one)" -p ffff:ffff -H 4:0 d2 ingress
nl_is EOPNOTSUPP "clsact as root" -p ffff:ffff -H 4:0 d2 clsact
# tc 6.1 refuses block index 0 itself; the kernel must too.
nl_is EINVAL "clsact with ingress_block 0" -i 0 d2 clsact
nl_is EINVAL "clsact with egress_block 0" -e 0 d2 clsact
nl_is EINVAL "ingress with ingress_block 0" -i 0 d2 ingress
is "$(only_kind d2)" 0 "d2 has no ingress/clsact qdisc after the refusals"
ip link del d2
nl_is EINVAL "TC_H_INGRESS as the parent of a prio qdisc" -p ffff:fff1 -H 5:0 d0 prio
is "$(only_kind d0) $(cat $PARAM)" "0 $base" "nothing created, no static key taken"

check "tc qdisc add dev d0 ingress" tc qdisc add dev d0 ingress
tc filter add dev d0 ingress matchall action pass
nl_is EINVAL "regrafting the ingress qdisc under prio class 1:1" -r -p 1:1 -H ffff:0 d0 ingress
nl_is EINVAL "replacing ingress ffff: by clsact ffff: (same handle, other kind)" -r -H ffff:0 d0 clsact
is "$(tc qdisc show dev d0 | grep -c 'qdisc ingress ffff:') $(tc filter show dev d0 ingress | grep -c 'matchall chain 0 handle') $(cat $PARAM)" \
	"1 1 $((base + 1))" "the ingress qdisc is whole, its filter there, one key held"
nl_is OK "replacing ingress by clsact with no handle (the core picks one)" -r -H 0:0 d0 clsact
is "$(tc qdisc show dev d0 | grep -c 'qdisc clsact') $(cat $PARAM)" "1 $base" \
	"clsact took its place, empty: no key; ingress's went with its filter"
tc filter add dev d0 ingress matchall action pass && tc filter add dev d0 egress matchall action pass
is "$(cat $PARAM)" $((base + 2)) "a filter on each of clsact's hooks: two keys"
nl_is OK "and back: clsact replaced by ingress" -r -H 0:0 d0 ingress
is "$(tc qdisc show dev d0 | grep -c 'qdisc ingress') $(cat $PARAM)" "1 $base" \
	"ingress again, empty: clsact's two keys released"
tc qdisc del dev d0 ingress
tc qdisc del dev d0 root

# CVE-2024-41010: an ingress qdisc on a shared block replaced by clsact,
# then the namespace deleted.
ip netns add cve
ip -n cve link add c0 type dummy
ip -n cve link set c0 up
tc -n cve qdisc add dev c0 ingress_block 1 ingress
# The core may answer EBUSY while it still holds the new qdisc (the
# check in qdisc_graft()); the answer must be clean and leave one whole
# qdisc either way.
for try in 1 2 3 4 5; do
	out=$(ip netns exec cve $NL -r -H 0:0 -i 1 c0 clsact)
	[ "${out%%:*}" = EBUSY ] || break
	sleep 1
done
case ${out%%:*} in OK | EBUSY) ok "replace the shared-block ingress by clsact: ${out%%:*} (attempt $try)" ;;
*) not_ok "replace the shared-block ingress by clsact: $out" ;; esac
is "$(tc -n cve qdisc show dev c0 | grep -cE 'qdisc (ingress|clsact)')" 1 "one whole qdisc on c0"
tc -n cve filter add block 1 matchall action pass
tc -n cve filter add dev c0 egress matchall action pass
# With filters on the block the core may refuse (EBUSY: the qdisc is
# held); either answer must leave one whole qdisc.
out=$(ip netns exec cve $NL -r -H 0:0 -i 1 c0 ingress)
case ${out%%:*} in OK | EBUSY) ok "replacing it back while its block has filters: ${out%%:*}" ;;
*) not_ok "replacing it back while its block has filters: $out" ;; esac
is "$(tc -n cve qdisc show dev c0 | grep -cE 'qdisc (ingress|clsact)')" 1 "one whole qdisc on c0"
check "delete the namespace with the shared block in use" ip netns del cve
is_within 20 "$base" "the namespace's qdisc released its keys" cat $PARAM

# Replace and delete while filter requests are in flight (unlocked ops).
ip link add d1 type dummy
tc qdisc add dev d1 clsact
for i in $(seq 300); do
	echo "filter add dev d1 ingress prio $((i % 7 + 1)) matchall action pass"
	echo "filter add dev d1 egress prio $((i % 5 + 1)) matchall action drop"
	echo "filter del dev d1 ingress prio $((i % 7 + 1))"
done >/tmp/filters.batch
tc -force -batch /tmp/filters.batch >/dev/null 2>&1 &
fpid=$!
busy=0
for i in $(seq 60); do
	out=$($NL -r -H 0:0 d1 clsact)
	[ "$out" = OK ] || busy=$((busy + 1))
	tc qdisc del dev d1 clsact 2>/dev/null
	tc qdisc add dev d1 clsact 2>/dev/null
done
wait $fpid
ok "300 filter add/del rounds raced 60 replace/delete/add rounds"
diag "replacements refused while filter requests were in flight: $busy (EBUSY is the core's answer)"
tc qdisc del dev d1 clsact 2>/dev/null
ip link del d1
ip link del d0
is "$(cat $PARAM)" "$base" "every static key released"
done_testing
