#!/bin/bash
# bench-timeout: 900
# Not part of make check (about 6 min on the debug kernel): run it with
#   TESTS='extra_hook_keys*' ONLY=clsact/ make check
# and alone: it sets failslab's global attributes, and tests/locks gives
# the failslab lock only to the tests it lists.
#
# An attack on patches/sched: an ingress or clsact qdisc holds its hook's
# static key (ingress_needed_key, egress_needed_key) per direction only
# while chain 0 of that direction's block has a classifier, taken and given
# back from the block's chain head callback, and the core's keys (these two
# and tcf_sw_enabled_key) go off a second late where CONFIG_JUMP_LABEL
# patches them. Ours (sch_clsact, its own release delay), then the tree's
# sch_ingress, in the same boot. A bug is: a count that does not come back
# to exactly what the filters left call for (and to "0 0 0" once everything
# is gone), a count below that at any check (a key off while a chain-0
# filter needs it), a kernel warning (sch_ingress warns in destroy when a
# key is still held), or a filter on chain 0 that does not count every
# packet sent. The counts are exact at once with the tree's module on the
# debug kernel (no CONFIG_JUMP_LABEL: a key is a counter); ours and the
# perf kernel's core give keys back late, so there they must never be below
# and must come down within 10 s, and ours' keys_wanted is exact at once.
#
#  A  requests that fail after their classifier became chain 0's head, on
#     empty chain 0s of blocks shared by three qdiscs: skip_sw (no device
#     offloads), an action the kernel refuses (vlan id 4095), a filter kind
#     or mask a chain template refuses; and ones that fail before (duplicate
#     handle, protocol or kind mismatch on an existing classifier), in one
#     tc -batch; then counting filters, pings and pktgen through all three;
#  B  chains: filters only on chain 1 (no hook key; tcf_sw_enabled_key
#     counts the block), chain 0 jumping to them, the jump's target emptied,
#     chain 0 created by a goto action alone and a qdisc joining the block
#     then, "tc chain del" of chain 0, each step with exact counts and
#     packets counted on chain 0 and behind the goto;
#  C  30 s of races: RTNL-unlocked flower and locked matchall head changes
#     and flushes, chain templates, gotos and failing requests on blocks 7
#     and 9 from two tc -batch loops; d1's qdisc added, deleted, replaced,
#     the directions crossed (egress on block 7), and unlocked filter
#     requests holding it; d2's qdisc replaced by raw netlink (qdisc_nl),
#     kind changes, failing estimators, EBUSY and fail-nth on the replace;
#     d3 made, given shared or own blocks with filters, deleted or moved to
#     another netns with all of that in place, while unlocked filter
#     requests race for its qdisc; ours' release delay switched between 0
#     and 1000 ms; pings both ways over v0 and pktgen into d1 and out of d2
#     throughout. Then everything churned deleted: exact counts, no
#     classifier left over, block 9's filter still counting; a fixed setup
#     with crossed directions: exact counts, pings and pktgen;
#  D  d1 deleted and d2 moved to a netns with qdisc and filters in place;
#     that netns given qdisc and filters of its own and deleted; a qdisc
#     held by a filter request (its classifier's module load waits) while
#     its device is deleted and its shared block's chain 0 is emptied and
#     filled again: keys given back once it is let go;
#  E  a veth pair across two netns, clsact with filters on both ends,
#     counted pings; one netns deleted under traffic;
#  F  fail-nth (python, raw rtnetlink): filter adds (matchall, flower) onto
#     an empty chain 0 and before a chain 0 head, qdisc adds (clsact,
#     ingress, crossed) onto blocks with filters, each fault point in turn:
#     after each request exact counts, and none left once its object is
#     deleted; then pings and pktgen.
# Every count is exact: IPv6 is off on v0, neighbours are static, every
# counting filter matches IPv4 only, and the dummies carry only pktgen's.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
own_netns clsact "$@"
NL=$CLSACT_DIR/qdisc_nl
SK=$CLSACT_DIR/static_key
P=${HK_PINGS:-3}		# pings per counted flow
NPG=40				# pktgen packets per device per counted flow
CHURN=${HK_CHURN:-30}		# seconds of races (C)
T=/tmp/hook-keys-attack
RUN=$T/run
MV=hkmv NSA=hka NSB=hkb		# netns that devices move to, E's pair
HOLD=/run/hook-keys-hold
HOLD_RULE=/run/modprobe.d/hook-keys-hold.conf
PG=/proc/net/pktgen
FS=/sys/kernel/debug/failslab
FPA=/sys/kernel/debug/fail_page_alloc
DELAY=/sys/module/sch_clsact/parameters/release_delay_ms
BAD_KMSG='BUG:|WARNING:|KASAN|UBSAN|general protection|Oops|circular locking|recursive locking|suspicious RCU|inconsistent lock|refcount_t|to become free|list_(add|del) corruption|blocked for more than|negative count'
pids=() ping_pids=() hold_pid='' hold_rc='' who=none settle=1 HAVE_PG=0 HAVE_FN=0 T1=0 KADDR='' ST=''
fs_saved=() fpa_saved=()

# ------------------------------------------------------------- helpers
# nap SECONDS: sleep without a process (a read that times out on a FIFO
# this shell holds open both ways); sleep(1) if that cannot work
nap() { read -rt "$1" -u "$NAPFD" _ 2>/dev/null || [ $? -gt 128 ] || sleep "$1"; }

# The keys' reader: "hk.py serve" as a coprocess for the whole test, so
# that a read costs no process; static_key (which scans /proc/kallsyms,
# slow under TCG, three times a call) where it cannot work.
start_keys_reader() {
	local line=
	coproc KEYSRV { exec python3 -u "$T/hk.py" serve 2>&1; }
	read -r -t 300 line <&"${KEYSRV[0]}"
	if [[ $line == "ADDR "* ]]; then
		KADDR=${line#ADDR }
	else
		diag "the keys' reader answered '$line': static_key reads them"
	fi
}
# read_state: ST="INGRESS EGRESS SW", the three keys' reference counts;
# with ours also "wanted N", the directions it wants a hook key for
read_state() {
	local s c out=() line=
	if [ -n "$KADDR" ]; then
		trap '' PIPE	# a reader gone: an error, not this shell's end
		{ echo >&"${KEYSRV[1]}" && read -r -t 30 line <&"${KEYSRV[0]}"; } 2>/dev/null
		trap - PIPE
		# an answer late or wrong would answer the next question
		[[ $line =~ ^-?[0-9]+\ -?[0-9]+\ -?[0-9]+$ ]] ||
			{ KADDR=; diag "the keys' reader answered '$line': static_key reads them"; }
	fi
	if [ -n "$KADDR" ]; then
		read -ra out <<<"$line"
	else
		while read -r s c; do out+=("$c"); done < <("$SK" ingress_needed_key egress_needed_key tcf_sw_enabled_key 2>&1)
	fi
	if [ "$who" = ours ]; then
		c=-
		read -r c <"$PARAM"
		out+=(wanted "$c")
	fi
	ST="${out[*]}"
}
# below GOT WANT: one of GOT's three counts is below WANT's
below() {
	local -a got_a want_a
	local k
	read -ra got_a <<<"$1"
	read -ra want_a <<<"$2"
	for k in 0 1 2; do
		[[ ${got_a[k]:-} =~ ^-?[0-9]+$ ]] || return 1
		[ "${got_a[k]}" -lt "${want_a[k]}" ] && return 0
	done
	return 1
}
# keys_are DESC I E S [POLL]: I ingress and E egress qdisc directions whose
# chain 0 has a classifier, S blocks with software filters: the keys count
# exactly that, at once where the kernel changes keys at once, else within
# 10 s; never below it at the first read. Ours: keys_wanted I + E at once.
# POLL (seconds): a teardown the kernel finishes later (netns deletion).
keys_are() {
	local desc=$1 i=$2 e=$3 s=$4 poll=${5:-0} want first got end
	[ "$who" = ours ] && s=$((s + OURS_SW * (i + e)))
	want="$i $e $s"
	[ "$who" = ours ] && want+=" wanted $((i + e))"
	end=$poll
	[ "$settle" = 1 ] && [ "$end" -lt 10 ] && end=10
	end=$((SECONDS + end))
	read_state
	first=$ST got=$ST
	while [ "$got" != "$want" ] && [ $SECONDS -lt $end ]; do
		nap 0.2
		read_state
		got=$ST
	done
	if below "$first" "$want"; then
		not_ok "$desc: keys $want"
		diag "first read '$first' is below '$want': a key off (or a reference lost) while a chain-0 filter needs it"
		return 1
	fi
	if [ "$who" = ours ] && [ "$poll" = 0 ] && [ "${first##* wanted }" != "${want##* wanted }" ]; then
		not_ok "$desc: keys $want"
		diag "ours: keys_wanted read '${first##* wanted }' at once, want '${want##* wanted }'"
		return 1
	fi
	is "$got" "$want" "$desc: keys $want"
	[ "$got" = "$want" ]
}

# acts NS: " NS:INDEX=PACKETS" for every gact action in this netns (NS ".")
# or the named one
acts() {
	local n=()
	[ "$1" = . ] || n=(-n "$1")
	tc "${n[@]}" -s actions ls action gact 2>/dev/null | awk -v p="$1" '
		{ gsub(/[,()]/, " ") }
		{ for (i = 1; i < NF; i++) if ($i == "index") idx = $(i + 1) }
		/Sent/ && idx != "" {
			for (i = 1; i < NF; i++) if ($(i + 1) == "pkt") printf " %s:%s=%s", p, idx, $i
			idx = ""
		}'
}
snap() { local ns; for ns; do acts "$ns"; done; echo " "; }
# val SNAP KEY: KEY's count in SNAP, "-" without it
val() {
	local r=${1#* "$2"=}
	if [ "$r" = "$1" ]; then echo -; else echo "${r%% *}"; fi
}
# delta BEFORE AFTER: AFTER - BEFORE, or "BEFORE/AFTER" unless both are counts
delta() {
	if [[ ${1:-} =~ ^[0-9]+$ && ${2:-} =~ ^[0-9]+$ ]]; then echo $(($2 - $1)); else echo "${1:-?}/${2:-?}"; fi
}
# pingn N [NS [ADDR]]: N echo requests (from NS, to ADDR); the replies
pingn() {
	local ns=() out
	[ -z "${2:-}" ] || ns=(ip netns exec "$2")
	out=$("${ns[@]}" ping -q -c "$1" -i 0.05 -W 1 "${3:-$B}" 2>/dev/null)
	[[ $out =~ ([0-9]+)\ received ]] && echo "${BASH_REMATCH[1]}"
}
# pktgen: pg_add THREAD DEV MODE COUNT [RATE]; pg_send DEV:MODE...: NPG
# packets from each (netif_receive: into its receive hook; queue_xmit: out
# of its transmit hook), and wait for them
pg_rem() { local t; for t in "$PG"/kpktgend_*; do echo rem_device_all >"$t"; done; }
pg_add() {
	local c
	echo "add_device $2" >"$PG/kpktgend_$1" || return 1
	for c in "count $4" "pkt_size 60" "xmit_mode $3" "dst 198.18.75.2" "dst_mac 02:00:00:00:00:02" ${5:+"ratep $5"}; do
		echo "$c" >"$PG/$2" || return 1
	done
}
pg_send() {
	local d
	pg_rem
	for d; do pg_add 0 "${d%%:*}" "${d#*:}" $NPG || { pg_rem; return 1; }; done
	echo start >$PG/pgctrl
	pg_rem
}
# flow DESC TRAFFIC SPEC...: TRAFFIC is "ping" (P pings v0 -> peer, all
# answered), "ping NS ADDR" (from NS) or "pg DEV:MODE..." (pg_send); each
# SPEC [NS%]INDEX=N: the gact action INDEX (in NS) counts exactly N packets
# meanwhile
flow() {
	local desc=$1 s k r before after got want nss=(.) tr
	shift
	read -ra tr <<<"$1"
	shift
	if [ "${tr[0]}" = pg ] && [ $HAVE_PG = 0 ]; then
		skip "$desc" "no pktgen"
		return
	fi
	for s; do [[ $s == *%* ]] && nss+=("${s%%\%*}"); done
	before=$(snap "${nss[@]}")
	case ${tr[0]} in
	ping)
		r=$(pingn "$P" "${tr[1]:-}" "${tr[2]:-}")
		got="replies ${r:-0}" want="replies $P"
		;;
	pg)
		if pg_send "${tr[@]:1}"; then got="pktgen sent"; else got="pktgen failed"; fi
		want="pktgen sent"
		;;
	esac
	after=$(snap "${nss[@]}")
	for s; do
		k=${s%=*}
		[[ $k == *%* ]] || k=".%$k"
		k=${k/\%/:}
		got+=" ${s%=*}=$(delta "$(val "$before" "$k")" "$(val "$after" "$k")")"
		want+=" $s"
	done
	is "$got" "$want" "$desc"
}
# chain_lines BLOCK...: the lines tc lists for each block, classifiers and
# filters of every chain ("filter ..." lines)
chain_lines() {
	local b batch=
	for b; do batch+="filter show block $b"$'\n'"qdisc show dev lo"$'\n'; done
	printf '%s' "$batch" | tc -force -batch - 2>/dev/null |
		awk '/^qdisc / {printf "%s%d", s, n; s = " "; n = 0; next} /^filter / {n++} END {print ""}'
}
# batch FILE LINE...: FILE gets LINE..., one a line
batch() { local f=$1; shift; printf '%s\n' "$@" >"$f"; }
# failed FILE: the line numbers of FILE that tc -force -batch FILE refused
failed() {
	tc -force -batch "$1" 2>&1 | sed -n 's/^Command failed .*:\([0-9]*\)$/\1/p' | tr '\n' ' ' | sed 's/ $//'
}
# hold_start, hold_end: lib.sh
bg_stop() {
	local p
	rm -f $RUN
	[ $HAVE_PG = 0 ] || echo stop >$PG/pgctrl 2>/dev/null
	for p in "${ping_pids[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${pids[@]}" "${ping_pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=() ping_pids=()
	[ $HAVE_PG = 0 ] || pg_rem
}
net_down() {
	local ns
	tc qdisc del dev v0 clsact 2>/dev/null
	batch $T/down.batch "link del d1" "link del d2" "link del d3" "link del d4"
	ip -force -batch $T/down.batch 2>/dev/null
	for ns in $MV $NSA $NSB; do ip netns del "$ns" 2>/dev/null; done
	topology_down
}
# kmsg_since MARK: kernel log lines after the last MARK
kmsg_since() { dmesg | awk -v m="$1" 'index($0, m) {n = 0; delete l; f = 1; next} f {l[n++] = $0} END {for (i = 0; i < n; i++) print l[i]}'; }
cleanup() {
	local i
	rm -f $HOLD
	bg_stop
	[ -z "$hold_pid" ] || wait "$hold_pid" 2>/dev/null
	rm -f $HOLD_RULE $HOLD.in
	[ -z "${KEYSRV_PID:-}" ] || kill "$KEYSRV_PID" 2>/dev/null
	net_down
	[ -w $DELAY ] && echo 1000 >$DELAY
	modprobe -r sch_clsact sch_ingress cls_basic 2>/dev/null
	for i in "${fs_saved[@]}"; do echo "${i#*=}" >"$FS/${i%%=*}"; done
	for i in "${fpa_saved[@]}"; do echo "${i#*=}" >"$FPA/${i%%=*}"; done
	rm -rf $T
}
trap cleanup EXIT
# the bench kills a test that overruns with TERM: clean up then too
trap "exit 143" TERM INT

# ------------------------------------------------------------- A
case_failed() {
	local w="$who: failed requests"
	batch $T/qd.batch \
		"qdisc add dev v0 ingress_block 7 egress_block 9 clsact" \
		"qdisc add dev d1 ingress_block 7 egress_block 9 clsact" \
		"qdisc add dev d2 ingress_block 7 ingress"
	check "$w: v0 and d1 clsact on blocks 7 and 9, d2 ingress on block 7" tc -batch $T/qd.batch
	keys_are "$w: three empty qdiscs" 0 0 0
	# Lines 1-4, 11 and 12 fail after their new classifier became chain
	# 0's head (the hooks' keys taken and given back), 6-8 before.
	batch $T/fail.batch \
		"filter add block 7 pref 1 protocol ip matchall skip_sw action pass" \
		"filter add block 9 pref 1 protocol ip flower skip_sw action pass" \
		"filter add block 7 pref 1 protocol ip matchall action vlan push id 4095" \
		"filter add block 9 pref 1 protocol ip flower action vlan push id 4095" \
		"filter add block 7 pref 2 protocol ip handle 1 flower action pass" \
		"filter add block 7 pref 2 protocol ip handle 1 flower action pass" \
		"filter add block 7 pref 2 protocol ipv6 flower action pass" \
		"filter add block 7 pref 2 protocol ip matchall action pass" \
		"filter del block 7 pref 2 protocol ip handle 1 flower" \
		"chain add block 9 chain 0 protocol ip flower dst_ip $B" \
		"filter add block 9 pref 1 protocol ip matchall action pass" \
		"filter add block 9 pref 1 protocol ip flower src_ip $A action pass" \
		"filter add block 9 pref 1 protocol ip flower dst_ip $B action pass" \
		"chain del block 9 chain 0"
	is "$(failed $T/fail.batch)" "1 2 3 4 6 7 8 11 12" \
		"$w: exactly the requests meant to fail failed (skip_sw, vlan id 4095, duplicate handle, protocol, kind, chain template)"
	is "$(chain_lines 7 9)" "0 0" "$w: blocks 7 and 9 list no classifier"
	keys_are "$w: after them, chain 0 empty on both blocks" 0 0 0
	batch $T/cnt.batch \
		"filter add block 7 pref 10 protocol ip matchall action pass index 1007" \
		"filter add block 9 pref 10 protocol ip matchall action pass index 1009"
	check "$w: counting filters on blocks 7 and 9" tc -batch $T/cnt.batch
	keys_are "$w: v0, d1, d2 on block 7, v0, d1 on block 9" 3 2 2
	flow "$w: pings counted on v0's blocks" ping 1007="$P" 1009="$P"
	flow "$w: pktgen into d2 and out of d1" "pg d2:netif_receive d1:queue_xmit" 1007=$NPG 1009=$NPG
}

# ------------------------------------------------------------- B
case_chains() {
	local w="$who: chains"
	batch $T/b0.batch "filter del block 7 pref 10" \
		"filter add block 7 chain 1 pref 1 protocol ip matchall action pass index 1101"
	check "$w: block 7's filter only on chain 1" tc -batch $T/b0.batch
	keys_are "$w: chain 0 empty: no ingress key, block 7 still counted for software filters" 0 2 2
	flow "$w: chain 1 alone is not run" ping 1101=0 1009="$P"
	check "$w: chain 0 jumps to chain 1" tc filter add block 7 pref 1 protocol ip matchall action goto chain 1 index 1001
	keys_are "$w: the goto on chain 0" 3 2 2
	flow "$w: pings run chain 0 and chain 1" ping 1001="$P" 1101="$P" 1009="$P"
	flow "$w: pktgen into d2 too" "pg d2:netif_receive" 1001=$NPG 1101=$NPG
	check "$w: chain 1 emptied (the goto keeps it)" tc filter del block 7 chain 1 pref 1
	keys_are "$w: chain 0's goto into an empty chain" 3 2 2
	flow "$w: chain 0's goto still counts, the packets pass" ping 1001="$P" 1009="$P"
	check "$w: the goto deleted" tc filter del block 7 pref 1
	keys_are "$w: both chains empty" 0 2 1
	check "$w: chain 1 jumps to chain 0, which only that action makes" \
		tc filter add block 7 chain 1 pref 1 protocol ip matchall action goto chain 0 index 1102
	keys_are "$w: chain 0 held by an action, no classifier" 0 2 2
	check "$w: d3's ingress joins block 7 then" tc qdisc add dev d3 ingress_block 7 ingress
	keys_are "$w: d3 on block 7, chain 0 still empty" 0 2 2
	check "$w: a filter on that chain 0" tc filter add block 7 pref 1 protocol ip matchall action pass index 1002
	keys_are "$w: v0, d1, d2, d3 on block 7" 4 2 2
	flow "$w: block 7's chain 0 counts, chain 1 is not reached" ping 1002="$P" 1102=0 1009="$P"
	flow "$w: pktgen into d3" "pg d3:netif_receive" 1002=$NPG 1102=0
	check "$w: tc chain del block 7 chain 0" tc chain del block 7 chain 0
	keys_are "$w: chain 0 flushed" 0 2 2
	check "$w: a filter on chain 0 again" tc filter add block 7 pref 1 protocol ip matchall action pass index 1003
	keys_are "$w: chain 0 refilled" 4 2 2
	flow "$w: the refilled chain 0 counts" ping 1003="$P" 1009="$P"
	check "$w: chain 1's goto deleted" tc filter del block 7 chain 1 pref 1
	keys_are "$w: chain 0 no longer held by an action" 4 2 2
	check "$w: d3's ingress deleted" tc qdisc del dev d3 ingress
	keys_are "$w: d3 gone from block 7" 3 2 2
	check "$w: chain 0's filter deleted" tc filter del block 7 pref 1
	keys_are "$w: block 7 empty" 0 2 1
}

# ------------------------------------------------------------- C
write_churn_batches() {
	# W1, W2: head changes, flushes, failing requests on blocks 7 and 9
	# (block 9's pref 10 filter stays: its chain 0 never empties)
	batch $T/w1.batch \
		"filter add block 7 pref 2 protocol ip flower action continue" \
		"filter add block 9 pref 2 protocol ip flower action continue" \
		"filter add block 7 pref 2 protocol ip flower skip_sw action continue" \
		"filter del block 7 pref 2" \
		"filter del block 9 pref 2" \
		"filter add block 7 pref 3 protocol ip handle 1 flower action continue" \
		"filter add block 7 pref 3 protocol ip handle 1 flower action continue" \
		"filter add block 9 pref 3 protocol ip flower action vlan push id 4095" \
		"filter del block 7 pref 3"
	batch $T/w2.batch \
		"filter add block 7 pref 2 protocol ip handle 2 flower action continue" \
		"filter del block 7 pref 2 protocol ip handle 2 flower" \
		"filter add block 9 pref 3 protocol ip flower action continue" \
		"filter del block 9 pref 3" \
		"filter add block 7 pref 4 protocol ip matchall action continue" \
		"filter add block 9 pref 4 protocol ip matchall skip_sw action continue" \
		"filter del block 7 pref 4" \
		"filter add block 9 chain 1 pref 1 protocol ip flower action continue" \
		"filter add block 9 pref 5 protocol ip flower action goto chain 1" \
		"filter del block 9 pref 5" \
		"filter del block 9 chain 1 pref 1" \
		"filter add block 7 pref 6 protocol ip matchall action continue" \
		"filter del block 7" \
		"chain add block 7 chain 0 protocol ip flower dst_ip $B" \
		"filter add block 7 pref 6 protocol ip flower dst_ip $B action continue" \
		"filter add block 7 pref 7 protocol ip matchall action continue" \
		"chain del block 7 chain 0"
	# W3: d1's qdisc, the directions crossed, and filter requests on it
	# (refused, its blocks being shared, after they held it)
	# (line 2: EBUSY once its ingress bound block 7)
	batch $T/w3.batch \
		"qdisc del dev d1 clsact" \
		"qdisc add dev d1 ingress_block 7 egress_block 7 clsact" \
		"qdisc add dev d1 ingress_block 7 ingress" \
		"filter add dev d1 ingress pref 9 protocol ip flower action continue" \
		"qdisc del dev d1 ingress" \
		"qdisc add dev d1 ingress_block 9 egress_block 7 clsact" \
		"filter add dev d1 egress pref 9 protocol ip flower action continue" \
		"qdisc del dev d1 clsact" \
		"qdisc add dev d1 ingress_block 7 egress_block 9 clsact"
	# W5: d3 made, given a qdisc (shared or own blocks, with filters),
	# then deleted or moved away with it
	batch $T/w5-up.batch "link add d3 type dummy" "link set d3 up"
	batch $T/w5-0.batch "qdisc add dev d3 ingress_block 7 egress_block 9 clsact"
	batch $T/w5-1.batch "qdisc add dev d3 clsact" \
		"filter add dev d3 ingress pref 1 protocol ip matchall action continue" \
		"filter add dev d3 egress pref 1 protocol ip flower action continue"
	batch $T/w5-2.batch "qdisc add dev d3 ingress_block 9 ingress"
	batch $T/w5-3.batch "qdisc add dev d3 egress_block 7 clsact" \
		"filter add dev d3 ingress pref 1 protocol ip flower action continue"
	# W7: unlocked filter requests on d3's own blocks, racing W5
	batch $T/w7.batch \
		"filter add dev d3 ingress pref 2 protocol ip flower action continue" \
		"filter add dev d3 egress pref 2 protocol ip flower action continue" \
		"filter del dev d3 ingress pref 2" \
		"filter del dev d3 egress pref 2"
	batch $T/norm.batch \
		"qdisc del dev d1 clsact" \
		"qdisc del dev d1 ingress" \
		"qdisc del dev d2 clsact" \
		"qdisc del dev d2 ingress" \
		"filter del block 7" \
		"chain del block 7 chain 0" \
		"filter del block 7 chain 1" \
		"filter del block 9 pref 2" \
		"filter del block 9 pref 3" \
		"filter del block 9 pref 4" \
		"filter del block 9 pref 5" \
		"filter del block 9 chain 1"
}
case_churn() {
	local w="$who: churn" end ms=1000
	ip netns add $MV
	: >$RUN
	(while [ -e $RUN ]; do tc -force -batch $T/w1.batch; done) >/dev/null 2>&1 &
	pids+=($!)
	(while [ -e $RUN ]; do tc -force -batch $T/w2.batch; done) >/dev/null 2>&1 &
	pids+=($!)
	(while [ -e $RUN ]; do tc -force -batch $T/w3.batch; done) >/dev/null 2>&1 &
	pids+=($!)
	(i=0
	while [ -e $RUN ]; do
		i=$((i + 1))
		echo "a $($NL -r -H 0:0 -i 9 -e 7 d2 clsact)"
		[ $HAVE_FN = 0 ] || echo "b $($NL -n $((i % 30 + 1)) -r -H 0:0 -i 7 d2 ingress)"
		echo "c $($NL -r -H 0:0 -i 7 -R 4 d2 ingress)"
		echo "d $($NL -r -H 0:0 -i 7 d2 ingress)"
		echo "e $($NL -r -H 0:0 -i 9 -e 9 d2 clsact)"
	done >$T/w4.out 2>&1) &
	pids+=($!)
	(i=0
	while [ -e $RUN ]; do
		i=$((i + 1))
		ip -force -batch $T/w5-up.batch
		tc -force -batch $T/w5-$((i % 4)).batch
		if [ $((i / 4 % 2)) = 0 ]; then
			ip link del d3
		else
			ip link set dev d3 netns $MV && ip -n $MV link del d3
		fi
	done >/dev/null 2>&1
	echo "$i" >$T/w5.rounds) &
	pids+=($!)
	(while [ -e $RUN ]; do tc -force -batch $T/w7.batch; done) >/dev/null 2>&1 &
	pids+=($!)
	ping -q -i 0.01 -w $((CHURN + 120)) "$B" >$T/ping-out.txt 2>&1 &
	ping_pids+=($!)
	ip netns exec peer ping -q -i 0.01 -w $((CHURN + 120)) "$A" >$T/ping-in.txt 2>&1 &
	ping_pids+=($!)
	if [ $HAVE_PG = 1 ]; then
		pg_rem
		pg_add 0 d1 netif_receive 0 300 && pg_add $T1 d2 queue_xmit 0 300
		(echo start >$PG/pgctrl) 2>/dev/null &
		pids+=($!)
	fi
	end=$((SECONDS + CHURN))
	while [ $SECONDS -lt $end ]; do
		# ours: a release owed now at once, now after a second
		if [ "$who" = ours ]; then ms=$((1000 - ms)); echo $ms >$DELAY; fi
		nap 1
	done
	[ "$who" = ours ] && echo 1000 >$DELAY
	bg_stop
	ok "$w: $CHURN s of filter, chain, qdisc and device churn on blocks 7 and 9 under pings and pktgen"
	diag "$w: d3 made and deleted or moved $(cat $T/w5.rounds 2>/dev/null) times; d2's raw requests: $(sort $T/w4.out | uniq -c | tr -s ' \n' ' ')"
	diag "$w: pings out: $(grep -o '[0-9]* received' $T/ping-out.txt), in: $(grep -o '[0-9]* received' $T/ping-in.txt)"
	read_state
	diag "$w: keys after the churn, before the cleanup: $ST"
	tc -force -batch $T/norm.batch >/dev/null 2>&1
	ip link del d3 2>/dev/null
	ip netns del $MV
	is "$(chain_lines 7 9)" "0 2" "$w: churned away: block 7 lists nothing, block 9 its pref 10 filter only"
	keys_are "$w: churned away: v0's egress on block 9 is the only direction with a filter" 0 1 1
	flow "$w: block 9's filter counted through it all, and still counts" ping 1009="$P"
	batch $T/c1.batch \
		"qdisc add dev d1 ingress_block 9 egress_block 7 clsact" \
		"qdisc add dev d2 ingress_block 7 ingress" \
		"filter add block 7 pref 10 protocol ip matchall action pass index 1007"
	check "$w: d1 clsact on blocks 9 and 7 (crossed), d2 ingress on block 7, block 7's filter" tc -batch $T/c1.batch
	keys_are "$w: in: v0, d2 (block 7), d1 (block 9); out: v0 (block 9), d1 (block 7)" 3 2 2
	flow "$w: pings after the churn" ping 1007="$P" 1009="$P"
	flow "$w: pktgen into d1 (block 9) and d2 (block 7)" "pg d1:netif_receive d2:netif_receive" 1007=$NPG 1009=$NPG
	flow "$w: pktgen out of d1 (block 7)" "pg d1:queue_xmit" 1007=$NPG 1009=0
}

# ------------------------------------------------------------- D
case_held() {
	local w="$who: a qdisc held by a filter request" dp now
	if ! modinfo cls_basic >/dev/null 2>&1; then
		skip "$w" "no cls_basic module"
		return
	fi
	batch $T/d4.batch "link add d4 type dummy" "link set d4 up"
	ip -batch $T/d4.batch
	batch $T/d4tc.batch "qdisc add dev d4 egress_block 41 clsact" \
		"filter add block 41 pref 10 protocol ip matchall action pass index 1041"
	check "$w: d4's clsact, egress on block 41 with a filter" tc -batch $T/d4tc.batch
	keys_are "$w: d4's egress key too" 1 2 3
	if ! hold_start tc filter add dev d4 ingress pref 5 protocol ip basic action pass index 1045; then
		not_ok "$w: a filter request holds d4's clsact (the install rule never ran)"
		hold_end
		ip link del d4
		return
	fi
	ip link del d4 &
	dp=$!
	nap 1
	# the held qdisc, off its device now, still on block 41: its chain 0
	# emptied and filled again
	batch $T/d4b.batch "filter del block 41 pref 10" \
		"filter add block 41 pref 10 protocol ip matchall action pass index 1041" \
		"filter add block 41 pref 3 protocol ip flower action continue"
	tc -batch $T/d4b.batch >/dev/null 2>&1
	read_state
	now=$ST
	diag "$w: d4 deleted while held ($(kill -0 $dp 2>/dev/null && echo "the deletion waits" || echo "the deletion ended")), block 41 refilled: keys $now"
	if below "$now" "1 1 2"; then
		not_ok "$w: meanwhile v0's keys stay"
		diag "'$now' is below v0's '1 1 2'"
	else
		ok "$w: meanwhile v0's keys stay"
	fi
	hold_end
	for _ in $(seq 100); do kill -0 $dp 2>/dev/null || break; nap 0.2; done
	if kill -0 $dp 2>/dev/null; then
		not_ok "$w: d4's deletion ends once the request is let go"
	else
		wait $dp
		ok "$w: d4's deletion ends once the request is let go"
	fi
	diag "$w: the held request ended ($hold_rc): $(tr '\n' ' ' <$T/hold.out)"
	keys_are "$w: destroyed when let go, block 41 with it: its keys given back" 1 1 2
	modprobe -r cls_basic 2>/dev/null
}
case_devices() {
	local w="$who: devices"
	check "$w: d1 deleted, its clsact (blocks 9 and 7) in place" ip link del d1
	keys_are "$w: d1 gone" 2 1 2
	ip netns add $MV
	check "$w: d2 moved to netns $MV, its ingress (block 7) in place" ip link set dev d2 netns $MV
	keys_are "$w: d2 moved away" 1 1 2
	batch $T/mv.batch \
		"qdisc add dev d2 ingress_block 7 egress_block 9 clsact" \
		"filter add block 7 pref 1 protocol ip matchall action pass" \
		"filter add block 9 pref 1 protocol ip flower action pass"
	check "$w: in $MV, d2 clsact with filters on that netns's own blocks 7 and 9" tc -n $MV -batch $T/mv.batch
	keys_are "$w: d2's clsact in $MV" 2 2 4
	check "$w: netns $MV deleted, d2's qdisc and filters in place" ip netns del $MV
	keys_are "$w: netns $MV gone" 1 1 2 30
	case_held
	flow "$w: v0's filters still count both ways" ping 1007="$P" 1009="$P"
}

# ------------------------------------------------------------- E
case_netns() {
	local w="$who: netns" pp
	ip netns add $NSA && ip netns add $NSB
	batch $T/nsa.batch "link add xa type veth peer name xb netns $NSB" "link set xa up" "addr add 198.18.72.1/24 dev xa"
	batch $T/nsb.batch "link set xb up" "addr add 198.18.72.2/24 dev xb"
	check "$w: a veth pair, xa in $NSA, xb in $NSB" bash -c "ip -n $NSA -batch $T/nsa.batch && ip -n $NSB -batch $T/nsb.batch"
	batch $T/xa.batch \
		"qdisc add dev xa ingress_block 5 egress_block 6 clsact" \
		"filter add block 5 pref 1 protocol ip matchall action pass index 1205" \
		"filter add block 6 pref 1 protocol ip flower action pass index 1206"
	batch $T/xb.batch \
		"qdisc add dev xb clsact" \
		"filter add dev xb ingress pref 1 protocol ip matchall action pass index 1215" \
		"filter add dev xb egress pref 1 protocol ip flower action pass index 1216"
	check "$w: clsact with filters on both ends" bash -c "tc -n $NSA -batch $T/xa.batch && tc -n $NSB -batch $T/xb.batch"
	keys_are "$w: xa's and xb's hooks" 3 3 6
	flow "$w: pings xa -> xb, each counted once per hook" "ping $NSA 198.18.72.2" \
		"$NSA%1206=$P" "$NSB%1215=$P" "$NSB%1216=$P" "$NSA%1205=$P"
	ip netns exec $NSB ping -q -i 0.01 -w 60 198.18.72.1 >/dev/null 2>&1 &
	pp=$!
	nap 0.5
	check "$w: netns $NSA deleted under pings, xa's qdisc and filters in place" ip netns del $NSA
	keys_are "$w: $NSA gone, and xb with its pair" 1 1 2 30
	kill -INT $pp 2>/dev/null
	wait $pp
	check "$w: netns $NSB deleted" ip netns del $NSB
	keys_are "$w: $NSB gone" 1 1 2
}

# ------------------------------------------------------------- F
case_sweep() {
	local w="$who: fail-nth" eh=0 es=0
	batch $T/d12.batch "link add d1 type dummy" "link set d1 up" "link add d2 type dummy" "link set d2 up"
	ip -batch $T/d12.batch
	batch $T/f0.batch "qdisc add dev d1 ingress_block 7 ingress" "filter del block 7 pref 10"
	check "$w: d1 ingress on block 7, block 7's filter deleted" tc -batch $T/f0.batch
	keys_are "$w: before: only v0's egress (block 9) has a filter" 0 1 1
	if [ $HAVE_FN = 1 ]; then
		[ "$who" != ours ] && [ $DEFERRED = 0 ] && eh=1
		[ $DEFERRED = 0 ] && { [ "$who" != ours ] || [ $OURS_SW = 0 ]; } && es=1
		tap_include python3 $T/hk.py sweep "$who" $eh $es $OURS_SW "0 1 1" "$KADDR"
	else
		skip "$w: sweeps" "no failslab or fail-nth"
		tc filter add block 7 pref 10 protocol ip matchall action pass index 1007
	fi
	keys_are "$w: after the sweeps: v0 and d1 on block 7 with its filter again, d2 bare" 2 1 2
	flow "$w: afterwards v0's filters count both ways" ping 1007="$P" 1009="$P"
	flow "$w: and d1's receive hook on block 7" "pg d1:netif_receive" 1007=$NPG
}

write_helper_py() {
	cat >$T/hk.py <<'PYEOF'
# Helper of extra_hook_keys_attack.sh (written there, run in its netns).
#   hk.py serve: the tc hooks' three static keys' counts, read through
#     /proc/kcore at the addresses /proc/kallsyms gives (as static_key
#     does), one line "INGRESS EGRESS SW" per line read; first a line
#     "ADDR A1 A2 A3" (hex), or "ERR ..." when they cannot be read. One
#     process for the whole test: static_key scans /proc/kallsyms, slow
#     under TCG, three times a call.
#   hk.py sweep WHO EXACT_HOOKS EXACT_SW OURS_SW "I E S" [ADDRS]: fail-nth
#     sweeps over filter and qdisc requests made in raw rtnetlink: each
#     request made N times, its Nth fault-injection point failing (N = 1,
#     2, ... until a request no longer reaches it); after each the keys'
#     counts, the object deleted if it exists, the counts again. "I E S":
#     the state the test set up (v0's clsact on blocks 7 and 9, d1's
#     ingress on block 7, block 9's filter at pref 10, block 7 empty, d2
#     without a qdisc): qdisc directions with a chain-0 filter, ingress
#     and egress, and blocks with software filters. TAP on stdout.
import errno
import os
import socket
import struct
import sys

KEYS = ("ingress_needed_key", "egress_needed_key", "tcf_sw_enabled_key")


def kallsyms_addrs():
	addr = {}
	with open("/proc/kallsyms") as f:
		for line in f:
			p = line.split()
			# module symbols carry a fourth column, "[module]"
			if len(p) == 3 and p[2] in KEYS:
				addr[p[2]] = int(p[0], 16)
	for k in KEYS:
		if not addr.get(k):
			raise RuntimeError("no address for %s in /proc/kallsyms" % k)
	return [addr[k] for k in KEYS]


def kcore_offsets(addrs):
	fd = os.open("/proc/kcore", os.O_RDONLY)
	eh = os.pread(fd, 64, 0)
	if eh[:4] != b"\x7fELF" or eh[4] != 2:
		raise RuntimeError("/proc/kcore is not a 64-bit ELF file")
	phoff, = struct.unpack_from("<Q", eh, 32)
	phentsize, phnum = struct.unpack_from("<HH", eh, 54)
	loads = []
	for i in range(phnum):
		ph = os.pread(fd, phentsize, phoff + i * phentsize)
		ptype, _, poff, vaddr, _, filesz = struct.unpack_from("<IIQQQQ", ph)
		if ptype == 1:	# PT_LOAD
			loads.append((vaddr, filesz, poff))
	offs = []
	for a in addrs:
		o = [po + a - v for v, sz, po in loads if v <= a and a + 4 <= v + sz]
		if not o:
			raise RuntimeError("%x not in /proc/kcore" % a)
		offs.append(o[0])
	return fd, offs


def read_keys(fd, offs):
	return tuple(struct.unpack("<i", os.pread(fd, 4, o))[0] for o in offs)


def serve():
	fd = offs = None
	try:
		addrs = kallsyms_addrs()
		fd, offs = kcore_offsets(addrs)
		print("ADDR " + " ".join("%x" % a for a in addrs), flush=True)
	except Exception as e:	# the test falls back to static_key
		print("ERR %r" % (e,), flush=True)
	for _ in sys.stdin:
		try:
			print("%d %d %d" % read_keys(fd, offs), flush=True)
		except Exception as e:
			print("ERR %r" % (e,), flush=True)


RTM_NEWQDISC, RTM_DELQDISC, RTM_NEWTFILTER, RTM_DELTFILTER = 36, 37, 44, 45
F_REQ, F_ACK, F_EXCL, F_CREATE = 0x1, 0x4, 0x200, 0x400
BLOCK = -1		# TCM_IFINDEX_MAGIC_BLOCK
INGRESS = 0xFFFFFFF1	# TC_H_INGRESS, also TC_H_CLSACT
IP = socket.htons(0x0800)


class Sweeper:
	def __init__(self, argv):
		self.who = argv[0]
		self.ours = self.who == "ours"
		self.exact_hooks, self.exact_sw = argv[1] == "1", argv[2] == "1"
		self.ours_sw = int(argv[3])
		self.base = tuple(int(x) for x in argv[4].split())
		addrs = [int(a, 16) for a in argv[5].split()] if len(argv) > 5 and argv[5] else kallsyms_addrs()
		self.kfd, self.offs = kcore_offsets(addrs)
		self.ntap = 0
		self.seq = 1000
		self.sk = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW | socket.SOCK_CLOEXEC, 0)
		self.sk.bind((0, 0))
		self.sk.setsockopt(270, 11, 1)	# SOL_NETLINK, NETLINK_EXT_ACK
		self.sk.settimeout(5)
		self.fn = os.open("/proc/thread-self/fail-nth", os.O_RDWR)

	def tap(self, good, desc):
		self.ntap += 1
		print("%s %d - %s" % ("ok" if good else "not ok", self.ntap, desc), flush=True)

	def keys(self):
		return read_keys(self.kfd, self.offs)

	def wanted(self):
		if not self.ours:
			return None
		with open("/sys/module/sch_clsact/parameters/keys_wanted") as f:
			return int(f.read())

	def bad_counts(self, got, w, m):
		"""what is wrong with the counts GOT and keys_wanted W, read together, for M"""
		i, e, s = m
		want = (i, e, s + (self.ours_sw * (i + e) if self.ours else 0))
		out = []
		for k, name in enumerate(("ingress", "egress", "sw")):
			exact = self.exact_sw if k == 2 else self.exact_hooks
			if got[k] < want[k]:
				out.append("%s key %d, below %d (off while a chain-0 filter needs it)" % (name, got[k], want[k]))
			elif exact and got[k] != want[k]:
				out.append("%s key %d, want %d" % (name, got[k], want[k]))
		if self.ours and w != i + e:
			out.append("keys_wanted %s, want %d" % (w, i + e))
		return out

	def tcmsg(self, typ, flags, ifindex, parent, handle, info, attrs):
		self.seq += 1
		body = struct.pack("<BBHiIII", 0, 0, 0, ifindex, handle, parent, info) + b"".join(attrs)
		return struct.pack("<IHHII", 16 + len(body), typ, flags, self.seq, 0) + body, self.seq

	def filter_add(self, block, prio, kind, index=0):
		# one gact "pass" (TC_ACT_OK) action: order 1 { KIND, OPTIONS { PARMS } }
		gact = nla(1, nla(1, b"gact\0") + nla(2, nla(2, struct.pack("<IIiii", index, 0, 0, 0, 0))))
		act = nla(2 if kind == "matchall" else 3, gact)	# TCA_MATCHALL_ACT, TCA_FLOWER_ACT
		return self.tcmsg(RTM_NEWTFILTER, F_REQ | F_ACK | F_CREATE | F_EXCL, BLOCK, block, 0,
				  (prio << 16) | IP, [nla(1, kind.encode() + b"\0"), nla(2, act)])

	def filter_del(self, block, prio):
		return self.tcmsg(RTM_DELTFILTER, F_REQ | F_ACK, BLOCK, block, 0, (prio << 16) | IP, [])

	def qdisc_add(self, dev, kind, iblock=0, eblock=0):
		a = [nla(1, kind.encode() + b"\0")]
		if iblock:
			a.append(nla(13, struct.pack("<I", iblock)))	# TCA_INGRESS_BLOCK
		if eblock:
			a.append(nla(14, struct.pack("<I", eblock)))	# TCA_EGRESS_BLOCK
		return self.tcmsg(RTM_NEWQDISC, F_REQ | F_ACK | F_CREATE | F_EXCL, socket.if_nametoindex(dev),
				  INGRESS, 0xFFFF0000, 0, a)

	def qdisc_del(self, dev):
		return self.tcmsg(RTM_DELQDISC, F_REQ | F_ACK, socket.if_nametoindex(dev), INGRESS, 0, 0, [])

	def ack(self, sq):
		while True:
			try:
				data = self.sk.recv(65536)
			except socket.timeout:
				return "ETIMEDOUT (no ack)"
			except OSError as e:
				return errname(e.errno) + " (no ack)"
			o = 0
			while o + 16 <= len(data):
				ln, typ, _, s2, _ = struct.unpack_from("<IHHII", data, o)
				if ln < 16:
					break
				if typ == 2 and s2 == sq:	# NLMSG_ERROR: the ack
					e, = struct.unpack_from("<i", data, o + 16)
					return "OK" if e == 0 else errname(-e)
				o += (ln + 3) & ~3

	def request(self, m, nth=0):
		"""the answer, and whether the Nth fault point was reached"""
		msg, sq = m
		injected = None
		if nth:
			os.write(self.fn, str(nth).encode())
		try:
			self.sk.send(msg)
			err = None
		except OSError as e:
			err = e.errno
		if nth:
			try:
				injected = int(os.pread(self.fn, 32, 0)) == 0
			except (OSError, ValueError):
				injected = True
			os.write(self.fn, b"0")	# disarm, whether or not it was reached
		if err is not None:
			return errname(err) + " (send)", injected
		return self.ack(sq), injected

	def sweep(self, desc, make, unmake, base, delta):
		bad, answers, fails, whole, n = [], {}, 0, 0, 0
		for n in range(1, 251):
			ans, injected = self.request(make(), n)
			k1, w1 = self.keys(), self.wanted()
			rm, _ = self.request(unmake())
			present = rm == "OK"
			k2, w2 = self.keys(), self.wanted()
			m1 = tuple(b + d for b, d in zip(base, delta)) if present else base
			problems = []
			if present:
				whole += 1
				if ans != "OK" and "no ack" not in ans:
					problems.append("answered %s, yet it was made" % ans)
			else:
				fails += 1
				if ans == "OK":
					problems.append("answered OK, yet there was nothing to delete (%s)" % rm)
				if rm != "ENOENT":
					problems.append("the delete answered %s" % rm)
			problems += ["right after the request: " + p for p in self.bad_counts(k1, w1, m1)]
			problems += ["after the delete: " + p for p in self.bad_counts(k2, w2, base)]
			if problems:
				bad.append("fail-nth %d (%s): %s; counts %s then %s" % (n, ans, "; ".join(problems), k1, k2))
			answers[ans] = answers.get(ans, 0) + 1
			if injected is False or len(bad) >= 5:
				break
		self.tap(not bad and fails > 0,
			 "%s: fail-nth: %s: %d requests, the Nth fault point failing: %d refused, %d whole; after "
			 "each the keys count exactly the filters on chain 0, none left once deleted"
			 % (self.who, desc, n, fails, whole))
		for b in bad:
			print("# " + b, flush=True)
		if not fails:
			print("# no request failed: fault injection never reached?", flush=True)
		print("# answers: " + ", ".join("%d %s" % (c, a) for a, c in sorted(answers.items())), flush=True)

	def run(self):
		base = self.base
		for p in self.bad_counts(self.keys(), self.wanted(), base):
			print("# before the sweeps: " + p, flush=True)
		self.sweep("a matchall filter added to block 7's empty chain 0 (v0's and d1's ingress)",
			   lambda: self.filter_add(7, 1, "matchall"), lambda: self.filter_del(7, 1), base, (2, 0, 1))
		self.sweep("a flower filter (RTNL-unlocked) added to block 7's empty chain 0",
			   lambda: self.filter_add(7, 1, "flower"), lambda: self.filter_del(7, 1), base, (2, 0, 1))
		self.sweep("a flower filter made block 9's chain 0 head, before its pref 10 filter",
			   lambda: self.filter_add(9, 1, "flower"), lambda: self.filter_del(9, 1), base, (0, 0, 0))
		ans, _ = self.request(self.filter_add(7, 10, "matchall", 1007))
		base = (base[0] + 2, base[1], base[2] + 1)
		p = self.bad_counts(self.keys(), self.wanted(), base)
		self.tap(ans == "OK" and not p, "%s: block 7's counting filter (pref 10) back: %s" % (self.who, ans))
		for x in p:
			print("# " + x, flush=True)
		self.sweep("clsact on d2 onto blocks 7 and 9, both with filters",
			   lambda: self.qdisc_add("d2", "clsact", 7, 9), lambda: self.qdisc_del("d2"), base, (1, 1, 0))
		self.sweep("ingress on d2 onto block 9",
			   lambda: self.qdisc_add("d2", "ingress", 9), lambda: self.qdisc_del("d2"), base, (1, 0, 0))
		self.sweep("clsact on d2 onto blocks 9 and 7 (each direction on the other's block)",
			   lambda: self.qdisc_add("d2", "clsact", 9, 7), lambda: self.qdisc_del("d2"), base, (1, 1, 0))


def nla(t, data):
	n = 4 + len(data)
	return struct.pack("<HH", n, t) + data + b"\0" * (-n % 4)


def errname(e):
	return errno.errorcode.get(e, "E%d" % e)


if sys.argv[1] == "serve":
	serve()
else:
	s = None
	try:
		s = Sweeper(sys.argv[2:])
		s.run()
	except Exception as ex:	# a crash is a failure, not a short plan
		print("not ok %d - %s: fail-nth sweeps: python died: %r" % ((s.ntap if s else 0) + 1, sys.argv[2], ex), flush=True)
		sys.exit(2)
PYEOF
}

# ------------------------------------------------------------- main
rm -rf $T	# a run killed before its cleanup
mkdir -p $T /run/modprobe.d
mkfifo $T/nap && exec {NAPFD}<>$T/nap
# own_netns mounted a sysfs of this netns over /sys, without debugfs
mountpoint -q /sys/kernel/debug || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
[ -x "$NL" ] || { not_ok "no $NL"; done_testing; }
if ! out=$("$SK" ingress_needed_key 2>&1); then
	skip "the hooks' static keys" "cannot read them: $out"
	done_testing
fi
read -r rel </proc/sys/kernel/osrelease
SERIES=0	# the bench kernel carries patches/, Debian's does not
case $rel in *-lk45) SERIES=1 ;; esac
# the core's keys go off a second after their last reference with the
# series, and only with CONFIG_JUMP_LABEL (without it a key is a counter)
DEFERRED=0
[ $SERIES = 1 ] && grep -qw jump_label_update_timeout /proc/kallsyms && DEFERRED=1
# ours holds tcf_sw_enabled_key with each hook key where the core does not
# defer it (modules/sch_clsact/Kbuild)
OURS_SW=$((1 - SERIES))
if ! { modprobe dummy && modprobe veth && modprobe cls_matchall && modprobe cls_flower && modprobe act_gact; }; then
	not_ok "cannot load dummy, veth, cls_matchall, cls_flower or act_gact"
	done_testing
fi
# without act_vlan the vlan lines fail all the same (no such action)
modprobe act_vlan 2>/dev/null
if modprobe pktgen 2>/dev/null && [ -e $PG/pgctrl ]; then
	HAVE_PG=1
	[ -e $PG/kpktgend_1 ] && T1=1
fi
if [ -d $FS ] && [ -w /proc/thread-self/fail-nth ]; then
	HAVE_FN=1
	for a in ignore-gfp-wait probability verbose; do read -r v <$FS/$a && fs_saved+=("$a=$v"); done
	echo N >$FS/ignore-gfp-wait && echo 0 >$FS/probability && echo 0 >$FS/verbose
	# fail-nth counts every point a fault attribute lets fail: page
	# allocations stay out of it
	if [ -d $FPA ]; then
		for a in probability ignore-gfp-wait min-order; do read -r v <$FPA/$a && fpa_saved+=("$a=$v"); done
		echo 0 >$FPA/probability && echo Y >$FPA/ignore-gfp-wait && echo 1 >$FPA/min-order
	fi
fi
sysctl -qw net.ipv6.conf.default.disable_ipv6=1	# this netns's new devices
write_churn_batches
write_helper_py
start_keys_reader
diag "series $SERIES, deferred keys $DEFERRED, pktgen $HAVE_PG, fail-nth $HAVE_FN; $P pings per count, $CHURN s of churn"
modprobe -r sch_clsact sch_ingress 2>/dev/null
# A test before this one may leave a release pending.
keys_are "no hook key held before the test" 0 0 0 ||
	{ diag "a key held by someone else: the counts below would mean nothing"; done_testing; }

for mod in sch_clsact sch_ingress; do
	who=$mod
	[ $mod = sch_clsact ] && who=ours
	settle=0
	{ [ $who = ours ] || [ $DEFERRED = 1 ]; } && settle=1
	if [ $who = sch_ingress ] && [ $SERIES = 0 ]; then
		skip "$who: the tree's qdiscs" "a kernel without the series: they hold the keys for as long as they exist"
		continue
	fi
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	if ! modprobe --ignore-install $mod; then
		not_ok "$who: load $mod"
		continue
	fi
	ok "$who: load $mod"
	mark="hook-keys-attack: $who begins $$"
	echo "$mark" >/dev/kmsg
	topology_up
	batch $T/dummies.batch "link add d1 type dummy" "link set d1 up" "link add d2 type dummy" \
		"link set d2 up" "link add d3 type dummy" "link set d3 up"
	ip -batch $T/dummies.batch
	t0=$SECONDS
	for c in failed chains churn devices netns sweep; do
		case_$c
		diag "$who: case $c done at $((SECONDS - t0)) s"
	done
	net_down
	keys_are "$who: everything deleted" 0 0 0
	check "$who: $mod unloads" modprobe -r $mod
	bad=$(kmsg_since "$mark" | grep -E "$BAD_KMSG" | head -20)
	is "$bad" "" "$who: no kernel warning, bug or leak report meanwhile"
done
who=none
keys_are "both modules gone: no hook key held" 0 0 0 10
done_testing
