#!/bin/bash
# bench-timeout: 600
# Not part of make check (about 3 min on the debug kernel): run it with
#   TESTS='extra_sched_attack25*' ONLY=clsact/ make check
# An attack on patches/sched-fixes 0001 (a qdisc publishes chain 0 from
# ->attach() once grafted and withdraws only its own mini_Qdisc, so a failed
# replace keeps the surviving qdisc's filters) and patches/sched 0002 (a
# hook's static key is held only while chain 0 has filters, given back a
# second late), with our sch_clsact, then the tree's sch_ingress, in one
# boot. Every counted packet is one the test chose: pktgen's UDP packets to
# port $PORT (a flower filter at pref 10 of each block counts them) into
# each device's receive hook (netif_receive) and out of its transmit hook
# (queue_xmit), a different count per device and direction so that a
# shortfall names them, and pings v0 -> peer (a flower ICMP filter at pref
# 20). IPv6 is off, neighbours are static, pktgen's frames go to a MAC and
# an address nobody has, so nothing answers them.
#
#  1  races: while pings run both ways over v0, pktgen into d1's receive
#     hook and out of v0's transmit hook, RTNL-unlocked flower head changes
#     on every block and unlocked filter requests that hold v0's qdisc (and
#     are refused: its blocks are shared), v0's qdisc goes round: clsact on
#     blocks 31/32 changed in place (tc replace of the same kind, a raw
#     same-kind replace with other blocks, tc change with an estimator),
#     refused (tc change to ingress, EBUSY on its own egress block, EINVAL
#     estimator, EOPNOTSUPP egress block for ingress), deleted and added,
#     replaced by ingress on block 33 and that by clsact(31,32) again
#     (NLM_F_REPLACE, and NLM_F_EXCL, which also grafts over another kind);
#     every answer exact. Then the survivor, as it is, counts a fresh burst,
#     both directions once it is clsact(31,32); d1 and d2 count theirs.
#  2  shared blocks 41/42/44 on v0, d1 (clsact 41/42), d2 (ingress 41) and
#     d3 (ingress 44): replaces refused on each (EBUSY onto a block the
#     device sits on, one block for both directions, EINVAL estimator after
#     binding a block with filters, EOPNOTSUPP, block 0, tc's change of
#     another kind and exclusive add): every device counts exactly as
#     before; the static keys exactly as before. A replace that succeeds
#     (d2 onto 42/44, both with filters) runs its new filters. v0's and then
#     d1's qdisc deleted: the others keep counting, v0 and d1 count nowhere.
#  3  tc -batch whose line 2 is refused (a clsact with one block for both
#     directions, after line 1 deleted v0's qdisc): without -force tc stops
#     there (v0 left without a qdisc, d1 counting on the blocks); with
#     -force every line runs, exactly lines 2 4 5 6 9 10 fail with their
#     extack, and v0, d1 and d3 (ingress on the egress block 52) count.
#  4  the static keys (ingress_needed_key, egress_needed_key,
#     tcf_sw_enabled_key, read through /proc/kcore): after each case with
#     filters, exactly the initial counts plus one per qdisc direction whose
#     chain 0 has filters and one per block with software filters (ours
#     holds tcf_sw_enabled_key with each hook key where the core does not
#     defer it); with every qdisc deleted and the release delays passed,
#     back to the initial counts; again once both modules are unloaded.
# And no kernel warning, bug or leak report meanwhile.
#
# On a kernel without the core fix (no mini_qdisc_pair_attach: Debian's)
# the counts after a replace on a shared block with filters are skipped:
# 6.12 loses the surviving (or the new) qdisc's filters there.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
own_netns clsact "$@"
. "$(dirname "$0")/../lib/pktgen.sh"
NL=$CLSACT_DIR/qdisc_nl
SK=$CLSACT_DIR/static_key
T=/tmp/sched-attack25
RUN=$T/run
RACE_SECS=${ATT25_RACE_SECS:-15}	# seconds of races (case 1), at least 4 half-rounds
MAXHALF=${ATT25_MAX_HALF_ROUNDS:-16}	# at most this many half-rounds
P=3					# pings per burst
PORT=4791				# the UDP port pktgen's counted packets go to
DEVS="v0 d1 d2 d3"
# pktgen packets per burst, into (in) and out of (out) each device
declare -A NPKT=([v0:in]=7 [v0:out]=5 [d1:in]=11 [d1:out]=13 [d2:in]=17 [d2:out]=23 [d3:in]=19 [d3:out]=29)
# what each device's ingress or clsact qdisc should be: kind, blocks
declare -A KIND IB EB ERRS
FIXED=0
grep -qw mini_qdisc_pair_attach /proc/kallsyms && FIXED=1
SERIES=0	# the bench kernel carries patches/, Debian's does not
case $(uname -r) in *-lk45) SERIES=1 ;; esac
# ours holds tcf_sw_enabled_key with each hook key where the core does not
# defer it (modules/sch_clsact/Kbuild)
OURS_SW=$((1 - SERIES))
E_INSERT="EBUSY: block dev insert failed"
E_EST="EINVAL: Failed to generate new estimator"
E_HELD="EBUSY: Current ingress or clsact Qdisc has ongoing filter requests"
E_EGB="EOPNOTSUPP: Egress block sharing is not supported"
T_NAME="rc=2 Error: Invalid qdisc name."
T_HELD="rc=2 Error: Current ingress or clsact Qdisc has ongoing filter requests."
T_EXCL="rc=2 Error: Exclusivity flag on, cannot modify."
BAD_KMSG='BUG:|WARNING:|KASAN|UBSAN|general protection|Oops|circular locking|recursive locking|suspicious RCU|inconsistent lock|refcount_t|to become free|list_(add|del) corruption|blocked for more than|negative count'
pids=() ping_pids=() who=none HAVE_PG=0 HAVE_SK=0 KEYS0='' T1=0 BAD=() ANS=''

# ------------------------------------------------------------- helpers
bg_stop() {
	local p
	rm -f $RUN
	[ -e "$PG/pgctrl" ] && echo stop >"$PG/pgctrl" 2>/dev/null
	for p in "${ping_pids[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${pids[@]}" "${ping_pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=() ping_pids=()
	[ $HAVE_PG = 0 ] || pg_clear
}
net_down() {
	local d
	for d in $DEVS; do tc qdisc del dev "$d" clsact 2>/dev/null || tc qdisc del dev "$d" ingress 2>/dev/null; done
	for d in d1 d2 d3; do ip link del $d 2>/dev/null; done
	topology_down
}
cleanup() {
	bg_stop 2>/dev/null
	net_down
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	rm -rf $T
}
trap cleanup EXIT
trap "exit 143" TERM INT

# set_qd DEV [KIND [IBLOCK [EBLOCK]]]: what DEV's qdisc should now be
set_qd() { KIND[$1]=${2:-}; IB[$1]=${3:-}; EB[$1]=${4:-}; }
states() { local d s=''; for d in $DEVS; do s+="${s:+ | }$d: $(qd "$d")"; done; echo "$s"; }
want_states() {
	local d s='' q
	for d in $DEVS; do
		q=none
		[ -z "${KIND[$d]}" ] || q="${KIND[$d]} ${IB[$d]:--} ${EB[$d]:--}"
		s+="${s:+ | }$d: $q"
	done
	echo "$s"
}
# qadd DEV KIND IBLOCK [EBLOCK]: tc adds it, and it is what DEV should have
qadd() {
	local a=(ingress_block "$3")
	[ -z "${4:-}" ] || a+=(egress_block "$4")
	tc qdisc add dev "$1" "${a[@]}" "$2" && set_qd "$1" "$2" "$3" "${4:-}"
}
qdel() { tc qdisc del dev "$1" "${KIND[$1]}" && set_qd "$1"; }
# filters BLOCK...: on each, pref 10 counts UDP to $PORT, pref 20 ICMP
filters() {
	local b
	for b; do
		tc filter add block "$b" pref 10 protocol ip flower ip_proto udp dst_port $PORT action pass &&
			tc filter add block "$b" pref 20 protocol ip flower ip_proto icmp action pass || return 1
	done
}
# nfilters BLOCK...: how many filters each block lists (0: none, or no block)
nfilters() {
	local b out=()
	for b; do out+=("$(tc filter show block "$b" 2>/dev/null | grep -c ' handle ')"); done
	echo "${out[@]}"
}
# cnt BLOCK/PREF...: packets the first action of each filter counted, "-" if
# there is none; one tc -batch, "qdisc show dev lo" marking each end
cnt() {
	local s batch=''
	for s; do batch+="filter show block ${s%/*} pref ${s#*/}"$'\n''qdisc show dev lo'$'\n'; done
	printf '%s' "$batch" | tc -s -force -batch - 2>/dev/null | awk '
		/^qdisc / {printf "%s ", (c == "" ? "-" : c); c = ""; skip = 1; next}
		/^filter / {skip = 0}
		!skip && c == "" && /Sent/ {c = $4}
		END {print ""}'
}
# delta BEFORE AFTER: AFTER - BEFORE, or "BEFORE/AFTER" unless both are counts
delta() {
	if [[ ${1:-} =~ ^[0-9]+$ && ${2:-} =~ ^[0-9]+$ ]]; then echo $(($2 - $1)); else echo "${1:-?}/${2:-?}"; fi
}
# pktgen: pg_add THREAD DEV MODE COUNT [RATE [UDP_PORT]] (DEV@N: the same
# device again, under another name)
pg_add() {
	local c
	echo "add_device $2" >"$PG/kpktgend_$1" || return 1
	for c in "count $4" "pkt_size 60" "xmit_mode $3" "dst 198.18.75.2" "dst_mac 02:00:00:00:00:02" \
		"udp_dst_min ${6:-$PORT}" "udp_dst_max ${6:-$PORT}" ${5:+"ratep $5"}; do
		echo "$c" >"$PG/$2" || return 1
	done
}
# pg_burst: NPKT packets into and out of every device, one pktgen run.
# ERRS[DEV]: transmits DEV refused, which pktgen sends again (its transmit
# hook counts each try)
pg_burst() {
	local d
	pg_clear || return 1
	for d in $DEVS; do
		pg_add 0 "$d" netif_receive "${NPKT[$d:in]}" || return 1
		pg_add 0 "$d@1" queue_xmit "${NPKT[$d:out]}" || return 1
	done
	echo start >"$PG/pgctrl" || return 1
	for d in $DEVS; do
		ERRS[$d]=$(sed -n 's/.*errors: \([0-9]*\).*/\1/p' "$PG/$d@1" | head -1)
		ERRS[$d]=${ERRS[$d]:-0}
		[ "${ERRS[$d]}" = 0 ] || diag "pktgen: $d refused ${ERRS[$d]} transmits (sent again, counted again)"
	done
	pg_clear
}
# burst DESC "BLOCK..." [fix]: pg_burst and P pings; then each block's
# filters counted exactly the packets of the devices whose qdisc (as set_qd
# says) has it in that direction: pref 10 pktgen's, pref 20 the pings'
# requests (v0's egress block) and replies (v0's ingress block). "fix": the
# counts need the core fix (a replace on shared blocks with filters came
# before), skipped without it.
burst() {
	local desc=$1 blocks=$2 need=${3:-} b d specs=() before after r got want i=0 n e
	for b in $blocks; do specs+=("$b/10" "$b/20"); done
	read -ra before <<<"$(cnt "${specs[@]}")"
	if [ $HAVE_PG = 1 ] && ! pg_burst; then
		not_ok "$desc: pktgen could not send"
		return
	fi
	r=$(pings $P)
	read -ra after <<<"$(cnt "${specs[@]}")"
	got="replies ${r:-0}" want="replies $P"
	for b in $blocks; do
		n=0 e=0
		for d in $DEVS; do
			[ -n "${KIND[$d]}" ] || continue
			if [ $HAVE_PG = 1 ]; then
				[ "${IB[$d]}" = "$b" ] && n=$((n + ${NPKT[$d:in]}))
				[ "${EB[$d]}" = "$b" ] && n=$((n + ${NPKT[$d:out]} + ${ERRS[$d]:-0}))
			fi
			[ "$d" = v0 ] && [ "${IB[$d]}" = "$b" ] && e=$((e + P))
			[ "$d" = v0 ] && [ "${EB[$d]}" = "$b" ] && e=$((e + P))
		done
		want+=" $b/10=$n $b/20=$e"
		got+=" $b/10=$(delta "${before[i]:-}" "${after[i]:-}") $b/20=$(delta "${before[i + 1]:-}" "${after[i + 1]:-}")"
		i=$((i + 2))
	done
	if [ "$need" = fix ] && [ $FIXED = 0 ]; then
		diag "$desc: got '$got', with the core fix '$want'"
		skip "$desc" "no core fix (mini_qdisc_pair_attach): 6.12 loses filters on a replace onto shared blocks with filters"
		return
	fi
	is "$got" "$want" "$desc"
}
# ans CMD...: a request's answer: qdisc_nl's line, or tc's exit status and
# message ("rc=N MESSAGE")
ans() {
	local out rc
	out=$("$@" 2>&1)
	rc=$?
	if [ "$1" = tc ]; then echo "rc=$rc${out:+ ${out//$'\n'/ }}"; else echo "$out"; fi
}
# refuse DESC WANT CMD...: CMD answers exactly WANT
refuse() {
	local desc=$1 want=$2
	shift 2
	is "$(ans "$@")" "$want" "$desc: answered $want"
}
# step TAG ALLOWED CMD...: ANS is CMD's answer, logged; one of ALLOWED
# ('|' between exact answers), or it joins BAD
step() {
	local tag=$1 a hit=0 alts
	IFS='|' read -ra alts <<<"$2"
	shift 2
	ANS=$(ans "$@")
	for a in "${alts[@]}"; do [ "$ANS" = "$a" ] && hit=1; done
	echo "$tag $ANS" >>$T/race.log
	[ $hit = 1 ] || BAD+=("$tag: $ANS")
}
# keys: "INGRESS EGRESS SW", the three keys' reference counts
keys() { "$SK" ingress_needed_key egress_needed_key tcf_sw_enabled_key 2>&1 | awk '{ printf "%s%s", s, $2; s = " " } END {print ""}'; }
# keys_stable: the keys once two reads 2 s apart agree (a release due)
keys_stable() {
	local a b i
	a=$(keys)
	for i in 1 2 3 4 5 6; do
		sleep 2
		b=$(keys)
		[ "$a" = "$b" ] && break
		a=$b
	done
	echo "$b"
}
# keys_check DESC I E S: I ingress and E egress qdisc directions whose chain
# 0 has filters, S blocks with software filters: the keys are the initial
# ones plus that, once the release delays passed (ours' keys_wanted, I + E,
# at once)
keys_check() {
	local desc=$1 i=$2 e=$3 s=$4 b
	if [ "$who" = ours ]; then
		is "$(cat $PARAM)" "$((i + e))" "$desc: ours wants $((i + e)) hook keys"
		s=$((s + OURS_SW * (i + e)))
	fi
	if [ $HAVE_SK = 0 ]; then
		skip "$desc: static keys" "cannot read them through /proc/kcore"
		return
	fi
	read -ra b <<<"$KEYS0"
	is_within 15 "$((b[0] + i)) $((b[1] + e)) $((b[2] + s))" \
		"$desc: static keys (ingress egress sw) initial + $i $e $s" keys
}
# kmsg_since MARK: kernel log lines after the last MARK
kmsg_since() { dmesg | awk -v m="$1" 'index($0, m) {n = 0; delete l; f = 1; next} f {l[n++] = $0} END {for (i = 0; i < n; i++) print l[i]}'; }

# ------------------------------------------------------------- case 1
# race_s1 / race_s2: a half-round from v0's clsact(31,32) / ingress(33);
# state, half and the tallies are case_race's
race_s1() {
	step a rc=0 tc qdisc replace dev v0 ingress_block 31 egress_block 32 clsact
	# same kind, handle 0: a change, which without TCA_OPTIONS ignores blocks
	step b OK $NL -r -H 0:0 -i 35 -e 36 v0 clsact
	step c rc=0 tc qdisc change dev v0 estimator 250ms 1sec clsact
	step d "$T_NAME" tc qdisc change dev v0 ingress
	step e "$E_INSERT" $NL -r -H 0:0 -i 32 v0 ingress
	step f "$E_EST" $NL -r -H 0:0 -i 33 -R 4 v0 ingress
	step g "$E_EGB" $NL -r -H 0:0 -i 33 -e 36 v0 ingress
	if [ $((half % 4)) = 0 ]; then
		step h "rc=0|$T_HELD" tc qdisc del dev v0 clsact
		if [ "$ANS" = rc=0 ]; then
			step i rc=0 tc qdisc add dev v0 ingress_block 31 egress_block 32 clsact
			[ "$ANS" = rc=0 ] || { state=lost; return; }
			dels=$((dels + 1))
		fi
	fi
	step j "OK|$E_HELD" $NL -r -H 0:0 -i 33 v0 ingress
	[ "$ANS" = OK ] && { state=S2; to2=$((to2 + 1)); }
}
race_s2() {
	step k rc=0 tc qdisc change dev v0 ingress
	step l OK $NL -r -H 0:0 -i 31 v0 ingress
	step m "$E_INSERT" $NL -r -H 0:0 -i 31 -e 31 v0 clsact
	step n "$E_INSERT" $NL -r -H 0:0 -i 33 -e 32 v0 clsact
	step o "$E_EST" $NL -r -H 0:0 -i 31 -e 32 -R 4 v0 clsact
	step p "$T_NAME" tc qdisc replace dev v0 ingress_block 31 egress_block 32 clsact
	if [ $((half % 4)) = 3 ]; then
		step q "rc=0|$T_HELD" tc qdisc del dev v0 ingress
		if [ "$ANS" = rc=0 ]; then
			step r rc=0 tc qdisc add dev v0 ingress_block 33 ingress
			[ "$ANS" = rc=0 ] || { state=lost; return; }
			dels=$((dels + 1))
		fi
	fi
	# NLM_F_CREATE | NLM_F_EXCL on handle 0 grafts over another kind too
	if [ $((half % 4)) = 1 ]; then
		step s "OK|$E_HELD" $NL -H 0:0 -i 31 -e 32 v0 clsact
	else
		step t "OK|$E_HELD" $NL -r -H 0:0 -i 31 -e 32 v0 clsact
	fi
	[ "$ANS" = OK ] && { state=S1; to1=$((to1 + 1)); }
}
case_race() {
	local w="$who: race" half=0 state=S1 to1=0 to2=0 dels=0 t_end t0=$SECONDS i b bad=''
	BAD=()
	: >$T/race.log
	if ! { qadd d1 clsact 31 32 && qadd d2 ingress 33 && qadd v0 clsact 31 32 && filters 31 32 33; }; then
		not_ok "$w: setup (d1 clsact(31,32), d2 ingress(33), v0 clsact(31,32), filters)"
		return
	fi
	burst "$w: before, v0 and d1 on blocks 31/32, d2 on 33, each counts" "31 32 33"
	# W1: RTNL-unlocked chain 0 head changes on every block (pref 5 before 10)
	for i in 1 2 3 4 5; do
		for b in 31 32 33; do
			echo "filter add block $b pref 5 protocol ip flower ip_proto udp dst_port 1 action pass"
			echo "filter del block $b pref 5"
		done
	done >$T/w1.batch
	# W2: unlocked filter requests that hold v0's qdisc, refused (shared)
	for i in $(seq 10); do
		echo "filter add dev v0 ingress pref 4 protocol ip flower action pass"
		echo "filter add dev v0 egress pref 4 protocol ip flower action pass"
	done >$T/w2.batch
	touch $RUN
	(while [ -e $RUN ]; do tc -force -batch $T/w1.batch; done) >/dev/null 2>&1 &
	pids+=($!)
	(while [ -e $RUN ]; do tc -force -batch $T/w2.batch; done) >/dev/null 2>&1 &
	pids+=($!)
	ping -q -i 0.02 -w 600 $B >$T/ping-out.txt 2>&1 &
	ping_pids+=($!)
	ip netns exec peer ping -q -i 0.02 -w 600 $A >$T/ping-in.txt 2>&1 &
	ping_pids+=($!)
	if [ $HAVE_PG = 1 ] && pg_clear && pg_add 0 d1 netif_receive 0 200 9 && pg_add $T1 v0 queue_xmit 0 200 9; then
		(echo start >$PG/pgctrl) 2>/dev/null &
		pids+=($!)
	fi
	t_end=$((SECONDS + RACE_SECS))
	while [ $half -lt "$MAXHALF" ] && { [ $SECONDS -lt $t_end ] || [ $half -lt 4 ]; }; do
		case $state in
		S1) race_s1 ;;
		S2) race_s2 ;;
		*) break ;;
		esac
		half=$((half + 1))
	done
	bg_stop
	# a ping still in flight (its softirq deferred to ksoftirqd) must not
	# land in the next burst's window
	sleep 1
	for i in "${BAD[@]}"; do bad+="$i; "; done
	is "$bad" "" "$w: every request answered exactly as it must (change OK, EBUSY/EINVAL/EOPNOTSUPP at create, OK or EBUSY held at graft)"
	diag "$w: $half half-rounds in $((SECONDS - t0)) s: $to2 clsact->ingress, $to1 ingress->clsact, $dels delete+add"
	diag "$w: answers: $(sort $T/race.log | uniq -c | tr -s ' \n' ' ')"
	diag "$w: pings meanwhile: out $(grep -o '[0-9]* received' $T/ping-out.txt), in $(grep -o '[0-9]* received' $T/ping-in.txt)"
	if [ $to1 -ge 1 ] && [ $to2 -ge 1 ]; then
		ok "$w: replaces went through both ways ($to2 and $to1)"
	else
		not_ok "$w: replaces went through both ways ($to2 and $to1)"
	fi
	case $state in
	S1) set_qd v0 clsact 31 32 ;;
	S2) set_qd v0 ingress 33 ;;
	*)
		not_ok "$w: v0 lost its qdisc (a tc add after a delete failed: $ANS)"
		set_qd v0
		;;
	esac
	is "$(states)" "$(want_states)" "$w: each device has the qdisc of the last request that succeeded"
	is "$(nfilters 31 32 33)" "2 2 2" "$w: each block has its two filters (the churned pref 5 gone)"
	burst "$w: afterwards the surviving $(qd v0) on v0, d1's and d2's qdiscs count a fresh burst" "31 32 33" fix
	if [ "$state" = S2 ]; then
		is "$(ans $NL -r -H 0:0 -i 31 -e 32 v0 clsact)" OK "$w: v0's ingress(33) replaced by clsact(31,32)"
		set_qd v0 clsact 31 32
		burst "$w: v0's clsact(31,32) counts both ways" "31 32 33" fix
	fi
	keys_check "$w: v0, d1 clsact(31,32), d2 ingress(33)" 3 2 3
	qdel v0
	qdel d1
	qdel d2
	is "$(states) $(nfilters 31 32 33)" "$(want_states) 0 0 0" "$w: qdiscs deleted, blocks 31-33 gone with them"
}

# ------------------------------------------------------------- case 2
case_shared() {
	local w="$who: shared blocks"
	if ! { qadd v0 clsact 41 42 && qadd d1 clsact 41 42 && qadd d2 ingress 41 && qadd d3 ingress 44 &&
		filters 41 42 44; }; then
		not_ok "$w: setup (v0, d1 clsact(41,42), d2 ingress(41), d3 ingress(44), filters)"
		return
	fi
	burst "$w: every device counts on the blocks it shares" "41 42 44"
	keys_check "$w: 4 ingress and 2 egress directions, 3 blocks" 4 2 3

	# replaces refused after the new qdisc bound blocks with filters
	refuse "$w: d1's clsact(41,42) by ingress(41)" "$E_INSERT" $NL -r -H 0:0 -i 41 d1 ingress
	refuse "$w: d2's ingress(41) by clsact(42,42)" "$E_INSERT" $NL -r -H 0:0 -i 42 -e 42 d2 clsact
	refuse "$w: d3's ingress(44) by clsact(41,44)" "$E_INSERT" $NL -r -H 0:0 -i 41 -e 44 d3 clsact
	refuse "$w: v0's clsact(41,42) by ingress(44), estimator that cannot start" "$E_EST" \
		$NL -r -H 0:0 -i 44 -R 4 v0 ingress
	is "$(states)" "$(want_states)" "$w: after EBUSY on d1, d2, d3 and EINVAL on v0, each keeps its qdisc"
	burst "$w: after EBUSY on d1, d2, d3 and EINVAL on v0, every device counts as before" "41 42 44" fix

	refuse "$w: d1's clsact by ingress(44), estimator that cannot start" "$E_EST" $NL -r -H 0:0 -i 44 -R 4 d1 ingress
	refuse "$w: d2's ingress by clsact(42,44), estimator that cannot start" "$E_EST" \
		$NL -r -H 0:0 -i 42 -e 44 -R 4 d2 clsact
	refuse "$w: v0's clsact by an ingress with an egress block" "$E_EGB" $NL -r -H 0:0 -i 44 -e 42 v0 ingress
	refuse "$w: v0's clsact by an ingress on block 0" "EINVAL: Ingress block index cannot be 0" \
		$NL -r -H 0:0 -i 0 v0 ingress
	refuse "$w: tc replace of v0's clsact by ingress (a change, of another kind)" "$T_NAME" \
		tc qdisc replace dev v0 ingress_block 44 ingress
	refuse "$w: tc add over d2's ingress" "$T_EXCL" tc qdisc add dev d2 ingress_block 41 ingress
	refuse "$w: tc change of d3's ingress to clsact" "$T_NAME" tc qdisc change dev d3 clsact
	is "$(states)" "$(want_states)" "$w: after 7 more refusals, each keeps its qdisc"
	burst "$w: after 7 more refusals, every device counts as before" "41 42 44" fix
	keys_check "$w: the refused qdiscs gave back the keys they took" 4 2 3

	# a replace that succeeds onto shared blocks with filters
	refuse "$w: d2's ingress(41) by clsact(42,44)" OK $NL -r -H 0:0 -i 42 -e 44 d2 clsact
	set_qd d2 clsact 42 44
	is "$(states)" "$(want_states)" "$w: d2 has clsact(42,44)"
	burst "$w: d2's new clsact counts on 42 and 44, its old block 41 no longer" "41 42 44" fix

	check "$w: v0's clsact deleted" qdel v0
	set_qd v0
	is "$(states)" "$(want_states)" "$w: v0 without a qdisc, the others keep theirs"
	burst "$w: v0's deleted: d1, d2, d3 keep counting, v0 counts nowhere" "41 42 44" fix
	check "$w: d1's clsact deleted" qdel d1
	set_qd d1
	is "$(nfilters 41 42 44)" "0 2 2" "$w: block 41 went with its last user, 42 and 44 stay"
	burst "$w: d1's deleted too: d2, d3 keep counting" "42 44" fix
	keys_check "$w: d2 clsact(42,44), d3 ingress(44)" 2 1 2
	qdel d2
	qdel d3
}

# ------------------------------------------------------------- case 3
case_batch() {
	local w="$who: tc -batch" F=$T/mixed.batch out rc want
	if ! { qadd v0 clsact 51 52 && qadd d1 clsact 51 52 && filters 51 52; }; then
		not_ok "$w: setup (v0, d1 clsact(51,52), filters)"
		return
	fi
	cat >$F <<-EOF
		qdisc del dev v0 clsact
		qdisc add dev v0 ingress_block 51 egress_block 51 clsact
		qdisc add dev v0 ingress_block 51 egress_block 52 clsact
		qdisc replace dev v0 ingress_block 53 ingress
		qdisc add dev d3 ingress_block 52 egress_block 52 clsact
		qdisc replace dev d3 ingress_block 51 egress_block 51 clsact
		qdisc add dev d3 ingress_block 52 ingress
		qdisc change dev d3 estimator 250ms 1sec ingress
		qdisc change dev d3 clsact
		qdisc add dev d3 ingress
	EOF
	out=$(tc -batch $F 2>&1)
	rc=$?
	is "rc=$rc $(echo "$out" | tr '\n' '|')" "rc=1 Error: block dev insert failed.|Command failed $F:2|" \
		"$w: without -force tc stops at line 2 (EBUSY: one block for both directions)"
	set_qd v0
	is "$(states) $(nfilters 51 52)" "$(want_states) 2 2" "$w: v0 left without a qdisc by line 1; d1 and blocks 51, 52 intact"
	burst "$w: v0 counts nowhere, d1 on 51 and 52" "51 52"
	keys_check "$w: d1 clsact(51,52) alone" 1 1 2

	check "$w: v0's clsact(51,52) back" qadd v0 clsact 51 52
	out=$(tc -force -batch $F 2>&1)
	rc=$?
	want="rc=1 Error: block dev insert failed.|Command failed $F:2|Error: Invalid qdisc name.|Command failed $F:4|"
	want+="Error: block dev insert failed.|Command failed $F:5|Error: block dev insert failed.|Command failed $F:6|"
	want+="Error: Invalid qdisc name.|Command failed $F:9|Error: Exclusivity flag on, cannot modify.|Command failed $F:10|"
	is "rc=$rc $(echo "$out" | tr '\n' '|')" "$want" \
		"$w: with -force every line runs, exactly lines 2 4 5 6 9 10 refused, each with its extack"
	set_qd d3 ingress 52
	is "$(states) $(nfilters 51 52)" "$(want_states) 2 2" "$w: v0 clsact(51,52) again, d3 ingress on the egress block 52"
	diag "$w: d3's qdisc with the estimator of line 8: $(tc -s qdisc show dev d3 | tr -s '\n ' ' ')"
	burst "$w: v0 and d1 count on 51 and 52, d3's receive hook on 52" "51 52"
	keys_check "$w: v0, d1 clsact(51,52), d3 ingress(52)" 3 2 2
	qdel v0
	qdel d1
	qdel d3
}

# ------------------------------------------------------------- case 4
case_keys_end() {
	local w="$who: keys" d
	for d in $DEVS; do
		[ -z "${KIND[$d]}" ] || qdel "$d"
		# (one a failed case left behind)
		tc qdisc del dev "$d" clsact 2>/dev/null || tc qdisc del dev "$d" ingress 2>/dev/null
		set_qd "$d"
	done
	is "$(states)" "v0: none | d1: none | d2: none | d3: none" "$w: every qdisc deleted"
	[ $who = ours ] && is "$(cat $PARAM)" 0 "$w: ours wants no hook key"
	if [ $HAVE_SK = 1 ]; then
		is_within 15 "$KEYS0" "$w: every qdisc deleted, the release delays passed: the static keys back to '$KEYS0'" keys
	else
		skip "$w: the static keys back to their initial counts" "cannot read them through /proc/kcore"
	fi
	[ $who = ours ] && is "$(keys_held_settled)" 0 "$w: ours holds no key reference once release_delay_ms passed"
}

# ------------------------------------------------------------- main
[ -x "$NL" ] || { not_ok "no $NL"; done_testing; }
mkdir -p $T
sysctl -qw net.ipv6.conf.default.disable_ipv6=1
modprobe dummy && modprobe veth && modprobe cls_flower && modprobe act_gact ||
	{ not_ok "cannot load dummy, veth, cls_flower or act_gact"; done_testing; }
if modprobe pktgen 2>/dev/null && [ -e $PG/pgctrl ]; then
	HAVE_PG=1
	[ -e $PG/kpktgend_1 ] && T1=1
else
	diag "no pktgen: bursts are the pings alone"
fi
# Not expressible here, so not attacked:
skip "clsact replaced by a new clsact in one request" \
	"a same-kind request on the ingress parent is a change in tc_modify_qdisc (blocks ignored without TCA_OPTIONS): attacked as delete+add and as raw same-kind replace, both asserted"
skip "a replace refused with EBUSY while a filter request holds a qdisc on shared blocks, held for long" \
	"a filter request by device on a shared block is refused before it loads a classifier, so lib.sh's hold cannot keep it; only the short holds of case 1's writer race the replaces (test_clsact_failed_replace holds one on a device's own block)"
skip "a change request (no NLM_F_CREATE) of another kind on handle 0, which grafts" \
	"tc sends handle ffff:0 and qdisc_nl always sets NLM_F_CREATE"
modprobe -r sch_clsact sch_ingress 2>/dev/null
if out=$("$SK" ingress_needed_key 2>&1); then
	HAVE_SK=1
	KEYS0=$(keys_stable)
	diag "static keys before the test (ingress egress sw): $KEYS0"
else
	diag "cannot read the static keys: $out"
fi
diag "core fix present: $FIXED; the series: $SERIES; $RACE_SECS s of races, pktgen: $HAVE_PG"
for mod in sch_clsact sch_ingress; do
	who=$mod
	[ $mod = sch_clsact ] && who=ours
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	if ! modprobe --ignore-install $mod; then
		not_ok "$who: load $mod"
		continue
	fi
	ok "$who: load $mod"
	mark="sched-attack25: $who begins $$"
	echo "$mark" >/dev/kmsg
	topology_up
	for d in d1 d2 d3; do dummy $d; done
	for d in $DEVS; do set_qd $d; done
	t0=$SECONDS
	for c in race shared batch keys_end; do
		case_$c
		diag "$who: case $c done at $((SECONDS - t0)) s"
	done
	net_down
	bad=$(kmsg_since "$mark" | grep -E "$BAD_KMSG" | head -20)
	is "$bad" "" "$who: no kernel warning, bug or leak report meanwhile"
	check "$who: $mod unloads" modprobe -r $mod
done
if [ $HAVE_SK = 1 ]; then
	is_within 15 "$KEYS0" "both modules unloaded: the static keys back to '$KEYS0'" keys
fi
done_testing
