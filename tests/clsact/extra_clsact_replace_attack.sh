#!/bin/bash
# bench-timeout: 900
# Not part of make check (about 5 min on the debug kernel): run it with
#   TESTS='extra_*' ONLY=clsact/ make check
# An attack on "publish an ingress qdisc's filters only once it is grafted"
# (mini_qdisc_pair_attach): a request that fails to replace v0's ingress or
# clsact qdisc must leave the surviving qdisc's filters running in both
# directions, a replace that succeeds must run the new qdisc's filters and
# only those. With our module, then with the tree's sch_ingress, in the same
# boot. What test_clsact_failed_replace.sh does not do:
#
#  A  replaces that fail onto the old qdisc's other-direction block (ingress
#     onto clsact's egress block, clsact's egress onto ingress's block), and
#     chains of replaces that succeed, each kind into the other, every new
#     qdisc's blocks already holding filters, every old qdisc's too, then
#     exact counts on all six blocks (the old ones must count nothing);
#  E  tc -batch mixing requests that fail (EEXIST, EINVAL, EBUSY from init)
#     and succeed with chain-0 head changes, alone and against raw replaces;
#  B  fail-nth over a replace onto shared blocks with filters (and an
#     estimator, so a failure after init is possible), each allocation in
#     turn: after each answer v0 shows the old or the new qdisc and exactly
#     that one's filters count, both ways;
#  F  a filter request holding the old qdisc (EBUSY), with the held
#     qdisc's shared block changing head meanwhile, and the request's own
#     filter becoming the head when it is let go;
#  C  replaces failing and succeeding under RTNL-unlocked (flower) filter
#     churn on the blocks involved, another device joining and leaving those
#     blocks (and deleted), unlocked filter requests holding v0's qdisc, and
#     pings both ways plus pktgen; then exact counts;
#  D  a shared block's other users deleted one by one, v0 its last user;
#  G  v0 moved to another netns while a filter request holds its qdisc (the
#     window the commit leaves): the moved device's new qdisc must count,
#     also when the held qdisc's filters or its shared block (changed from
#     the old netns) get a new chain head; and v0 deleted while held.
#
# Every count is exact: IPv6 is off, neighbours are static, the filters
# count IPv4 only and the dummies carry no traffic but pktgen's.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"
own_netns clsact "$@"
NL=$CLSACT_DIR/qdisc_nl
P=${CLSACT_ATTACK_PINGS:-3}		# pings per exact count
SWEEP=${CLSACT_REPLACE_SWEEP:-24}	# fail-nth points tried per direction
R=${CLSACT_REPLACE_ROUNDS:-10}		# rounds of the race
MV=rmv					# the netns v0 moves to
T=/tmp/replace-attack
RUN=$T/run
HOLD=/run/clsact-rhold
HOLD_RULE=/run/modprobe.d/clsact-rhold.conf
mkdir -p /run/modprobe.d
PG=/proc/net/pktgen
FS=/sys/kernel/debug/failslab
KML=/sys/kernel/debug/kmemleak
ALL="7 8 9 10 11 12"			# the anchored shared blocks
pids=() ping_pids=() hold_pid='' hold_rc='' MAC0='' MAC1='' who='' UNL=flower
FIXED=0
grep -qw mini_qdisc_pair_attach /proc/kallsyms && FIXED=1

# ------------------------------------------------------------- helpers
bg_stop() {
	local p
	rm -f $RUN
	[ -e $PG/pgctrl ] && echo stop >$PG/pgctrl 2>/dev/null
	for p in "${ping_pids[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${pids[@]}" "${ping_pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=() ping_pids=()
	[ -e $PG/pgctrl ] && pg_rem
}
del_v0() { tc qdisc del dev v0 ingress 2>/dev/null || tc qdisc del dev v0 clsact 2>/dev/null; }
net_down() {
	del_v0
	ip link del v0 2>/dev/null
	ip -n $MV link del v0 2>/dev/null
	ip netns del $MV 2>/dev/null
	for d in d1 d2 d3 d4; do ip link del $d 2>/dev/null; done
	topology_down
}
old_v6=$(sysctl -n net.ipv6.conf.default.disable_ipv6 2>/dev/null)
old_fs=
cleanup() {
	rm -f $HOLD
	bg_stop
	[ -z "$hold_pid" ] || wait "$hold_pid" 2>/dev/null
	rm -f $HOLD_RULE $HOLD.in
	net_down
	modprobe -r sch_ingress cls_basic 2>/dev/null
	[ -z "$old_v6" ] || sysctl -qw net.ipv6.conf.default.disable_ipv6="$old_v6"
	[ -z "$old_fs" ] || echo "$old_fs" >$FS/ignore-gfp-wait
	rm -rf $T
}
trap cleanup EXIT
# the bench kills a test that overruns with TERM: restore the sysctls then too
trap "exit 143" TERM INT

# v0_set KIND [IBLOCK|-] [EBLOCK|-]: v0's qdisc made afresh with tc
v0_set() {
	local a=()
	del_v0
	[ "${2:--}" = - ] || a+=(ingress_block "$2")
	[ "${3:--}" = - ] || a+=(egress_block "$3")
	tc qdisc add dev v0 "${a[@]}" "$1"
}
# nfilters BLOCK...: how many filters each block lists
nfilters() {
	local b out=()
	for b; do out+=("$(tc filter show block "$b" 2>/dev/null | grep -c ' handle ')"); done
	echo "${out[@]}"
}
# cnt SPEC...: packets counted by the first action of each SPEC, "-" if it
# has none. SPEC is [NS%]WHAT[/PREF]; WHAT a block index or DEV:ingress or
# DEV:egress. One tc -batch per netns; "qdisc show dev lo" between two
# shows marks where one ends.
cnt() {
	local s ns t p prev=__ batch='' out=()
	for s in "$@" __end__; do
		ns=
		t=$s
		if [[ $s == *%* ]]; then ns=${s%%\%*}; t=${s#*%}; fi
		if [ -n "$batch" ] && { [ "$s" = __end__ ] || [ "$ns" != "$prev" ]; }; then
			# shellcheck disable=SC2046
			out+=($(printf '%s' "$batch" | tc ${prev:+-n "$prev"} -s -force -batch - 2>/dev/null | awk '
				/^qdisc / {printf "%s ", (c == "" ? "-" : c); c = ""; skip = 1; next}
				/^filter / {skip = 0}
				!skip && c == "" && /Sent/ {c = $4}'))
			batch=
		fi
		[ "$s" = __end__ ] && break
		prev=$ns
		p=
		if [[ $t == */* ]]; then p="pref ${t#*/}"; t=${t%/*}; fi
		case $t in
		*:*) batch+="filter show dev ${t%:*} ${t#*:} $p"$'\n' ;;
		*) batch+="filter show block $t $p"$'\n' ;;
		esac
		batch+=$'qdisc show dev lo\n'
	done
	echo "${out[@]}"
}
# pingn N [NS]: N echo requests to the peer from v0 (in NS); the replies
pingn() {
	local ns=()
	[ -z "${2:-}" ] || ns=(ip netns exec "$2")
	"${ns[@]}" ping -q -c "$1" -i 0.05 -W 1 $B 2>/dev/null | awk '/received/ {print $4}'
}
# delta BEFORE AFTER: AFTER - BEFORE, or "BEFORE/AFTER" unless both are counts
delta() {
	if [[ ${1:-} =~ ^[0-9]+$ && ${2:-} =~ ^[0-9]+$ ]]; then echo $(($2 - $1)); else echo "${1:-?}/${2:-?}"; fi
}
# flow DESC SPEC=DELTA...: P pings from v0 (in netns $VNS if set), all
# answered, and meanwhile each SPEC's action counted exactly DELTA packets
flow() {
	local desc=$1 s specs=() b a r i=0 got want
	shift
	for s; do specs+=("${s%=*}"); done
	read -ra b <<<"$(cnt "${specs[@]}")"
	r=$(pingn "$P" "${VNS:-}")
	read -ra a <<<"$(cnt "${specs[@]}")"
	got="replies ${r:-0}" want="replies $P"
	for s; do
		want+=" $s"
		got+=" ${specs[i]}=$(delta "${b[i]:-}" "${a[i]:-}")"
		i=$((i + 1))
	done
	is "$got" "$want" "$desc"
}
# ex BLOCK...: SPEC=DELTA for each anchored block's filter (pref 10): P
# for the blocks named, 0 for the others
ex() {
	local b out=()
	for b in $ALL; do
		if [[ " $* " == *" $b "* ]]; then out+=("$b/10=$P"); else out+=("$b/10=0"); fi
	done
	echo "${out[@]}"
}
# attempt DESC ANSWER QDISC "BLOCKS" NL-ARGS...: a raw request, its exact
# answer, the qdisc v0 has after it, and exactly BLOCKS' filters counting
attempt() {
	local desc=$1 want=$2 q=$3 blocks=$4
	shift 4
	is "$($NL "$@")" "$want" "$desc: answered $want"
	is "$(qd v0)" "$q" "$desc: v0 has $q"
	# shellcheck disable=SC2046
	flow "$desc: block(s) ${blocks:-none} count each packet, no other block any" $(ex $blocks)
}
# hold_start, hold_end: lib.sh
# v0_home [NS]: v0's address, link and static neighbour, in NS
v0_home() {
	local n=(${1:+-n "$1"})
	ip "${n[@]}" addr add $A/24 dev v0 &&
		ip "${n[@]}" link set v0 up &&
		ip "${n[@]}" neigh replace $B lladdr "$MAC1" dev v0 nud permanent
}
# pktgen: pg_add THREAD DEV MODE COUNT DST_MAC [RATE]
pg_rem() { local t; for t in $PG/kpktgend_*; do echo rem_device_all >"$t"; done; }
pg_add() {
	local c
	echo "add_device $2" >$PG/kpktgend_"$1"
	for c in "count $4" "pkt_size 60" "xmit_mode $3" "dst 198.18.75.2" "dst_mac $5" ${6:+"ratep $6"}; do
		echo "$c" >$PG/"$2"
	done
}
# kmsg_since MARK: kernel log lines after the last MARK
kmsg_since() { dmesg | awk -v m="$1" 'index($0, m) {n = 0; delete l; f = 1; next} f {l[n++] = $0} END {for (i = 0; i < n; i++) print l[i]}'; }
BAD_KMSG='BUG:|WARNING:|KASAN|UBSAN|general protection|Oops|circular locking|recursive locking|suspicious RCU|inconsistent lock|refcount_t|to become free|list_(add|del) corruption|blocked for more than'

# ------------------------------------------------------------- cases
case_success() {
	local w="$who: replace"
	v0_set clsact 7 9
	# shellcheck disable=SC2046
	flow "$w: v0's clsact on blocks 7 and 9 counts both ways" $(ex 7 9)
	attempt "$w clsact(7,9) by ingress on its egress block 9" "EBUSY: block dev insert failed" \
		"clsact 7 9" "7 9" -r -H 0:0 -i 9 v0 ingress
	attempt "$w clsact(7,9) by ingress(8)" OK "ingress 8 -" "8" -r -H 0:0 -i 8 v0 ingress
	attempt "$w ingress(8) by clsact(11,8), egress on its block" "EBUSY: block dev insert failed" \
		"ingress 8 -" "8" -r -H 0:0 -i 11 -e 8 v0 clsact
	attempt "$w ingress(8) by clsact(11,12)" OK "clsact 11 12" "11 12" -r -H 0:0 -i 11 -e 12 v0 clsact
	attempt "$w clsact(11,12) by ingress(7)" OK "ingress 7 -" "7" -r -H 0:0 -i 7 v0 ingress
	attempt "$w ingress(7) by clsact(8,10)" OK "clsact 8 10" "8 10" -r -H 0:0 -i 8 -e 10 v0 clsact
	attempt "$w clsact(8,10) by ingress(12) whose estimator cannot start" \
		"EINVAL: Failed to generate new estimator" "clsact 8 10" "8 10" -r -H 0:0 -i 12 -R 4 v0 ingress
	# Same kind: a change, which without options ignores the blocks.
	diag "$w: clsact onto blocks 7 and 9 over clsact(8,10), a change: $($NL -r -H 0:0 -i 7 -e 9 v0 clsact)"
	is "$(qd v0)" "clsact 8 10" "$w: a change of kind clsact leaves v0's clsact on blocks 8 and 10"
	attempt "$w clsact(8,10) by an ingress with a block of its own" OK "ingress - -" "" -r -H 0:0 v0 ingress
	tc filter add dev v0 ingress pref 10 protocol ip matchall action pass
	# shellcheck disable=SC2046
	flow "$w: a filter on the new ingress's own block counts the replies, no shared block any" \
		v0:ingress/10=$P $(ex)
	attempt "$w ingress(own block) by clsact(7,9)" OK "clsact 7 9" "7 9" -r -H 0:0 -i 7 -e 9 v0 clsact
}

# Requests that fail (F) and succeed, with head changes, in one tc -batch.
BATCH_FAILS="1 2 5 7 9 10 12 15 19"
case_batch() {
	local w="$who: tc -batch" pass bp i fails
	cat >$T/mixed.batch <<-EOF
		qdisc add dev v0 ingress_block 8 ingress
		qdisc replace dev v0 ingress_block 8 ingress
		filter add block 7 pref 5 protocol ip $UNL action pass
		qdisc del dev v0 clsact
		qdisc add dev v0 ingress_block 8 egress_block 8 clsact
		qdisc add dev v0 ingress_block 7 egress_block 8 clsact
		qdisc add dev v0 ingress_block 9 ingress
		filter del block 7 pref 5
		qdisc del dev v0 ingress
		qdisc add dev v0 ingress_block 9 egress_block 9 clsact
		qdisc del dev v0 clsact
		qdisc add dev v0 ingress_block 9 egress_block 9 clsact
		qdisc add dev v0 ingress_block 8 ingress
		filter add block 8 pref 5 protocol ip $UNL action pass
		qdisc replace dev v0 ingress_block 7 egress_block 9 clsact
		filter del block 8 pref 5
		qdisc del dev v0 ingress
		qdisc add dev v0 ingress_block 7 egress_block 9 clsact
		qdisc add dev v0 ingress_block 7 ingress
	EOF
	for pass in alone "against raw replaces"; do
		v0_set clsact 7 9
		tc -force -batch $T/mixed.batch >$T/batch.out 2>&1 &
		bp=$!
		i=0
		if [ "$pass" != alone ]; then
			# Requests that never change v0's qdisc, whatever it is:
			# a create fails at its estimator, a same-kind change
			# ignores it.
			while kill -0 $bp 2>/dev/null && [ $i -lt 200 ]; do
				$NL -r -H 0:0 -i 12 -R 4 v0 ingress
				$NL -r -H 0:0 -i 12 -e 11 -R 4 v0 clsact
				i=$((i + 1))
			done >$T/batch-nl.out
		fi
		wait $bp
		fails=$(sed -n 's/^Command failed .*:\([0-9]*\)$/\1/p' $T/batch.out | tr '\n' ' ' | sed 's/ $//')
		is "$fails" "$BATCH_FAILS" "$w ($pass): exactly the requests meant to fail failed"
		[ "$fails" = "$BATCH_FAILS" ] || sed 's/^/# /' $T/batch.out
		[ $i = 0 ] || diag "$w ($pass): $i pairs of raw requests meanwhile: $(sort $T/batch-nl.out | uniq -c | tr -s ' \n' ' ')"
		is "$(qd v0) $(nfilters 7 8)" "clsact 7 9 1 1" "$w ($pass): v0 ends with clsact(7,9), blocks 7 and 8 with their one filter"
		# shellcheck disable=SC2046
		flow "$w ($pass): v0's clsact counts on blocks 7 and 9 only" $(ex 7 9)
	done
}

# SWEEP_OLD/NEW: qdisc; SWEEP_OLDD/NEWD: deltas on blocks 7 8 9 10
sweep() {
	local w=$1 n out q r b a got want fails=0 oks=0 bad=0 run=0 errs=
	shift
	for n in $(seq "$SWEEP"); do
		read -ra b <<<"$(cnt 7/10 8/10 9/10 10/10)"
		out=$($NL -n "$n" "${REQ[@]}")
		q=$(qd v0)
		r=$(pingn 2)
		read -ra a <<<"$(cnt 7/10 8/10 9/10 10/10)"
		got="$q: ${r:-0} $(delta "${b[0]:-}" "${a[0]:-}") $(delta "${b[1]:-}" "${a[1]:-}") $(delta "${b[2]:-}" "${a[2]:-}") $(delta "${b[3]:-}" "${a[3]:-}")"
		if [ "$q" = "$SWEEP_OLD" ]; then
			want="$SWEEP_OLD: 2 $SWEEP_OLDD"
			fails=$((fails + 1))
			errs+="${out%%:*} "
			[ "$out" != OK ] || { bad=$((bad + 1)); diag "fail-nth $n: answered OK, yet v0 kept $q"; }
		elif [ "$q" = "$SWEEP_NEW" ]; then
			want="$SWEEP_NEW: 2 $SWEEP_NEWD"
			oks=$((oks + 1))
		else
			want="$SWEEP_OLD or $SWEEP_NEW"
		fi
		[ "$got" = "$want" ] || { bad=$((bad + 1)); diag "fail-nth $n ($out): got '$got', want '$want'"; }
		if [ "$q" = "$SWEEP_NEW" ]; then
			r=$($NL "$@")
			[ "$r" = OK ] || { bad=$((bad + 1)); diag "fail-nth $n: restoring $SWEEP_OLD answered $r"; }
		fi
		if [ "$out" = OK ]; then run=$((run + 1)); else run=0; fi
		[ $run -lt 3 ] && [ $bad -lt 4 ] || break
	done
	is "$bad" 0 "$w: $n requests, the Nth fault point failing: $fails refused, v0 keeping $SWEEP_OLD; $oks whole; each time exactly that qdisc's filters counted both ways"
	diag "$w: answers: $(echo "$errs" | tr ' ' '\n' | grep . | sort | uniq -c | tr -s ' \n' ' ')"
	[ $fails -gt 0 ] || not_ok "$w: no request failed (fault injection not reached?)"
	is "$(qd v0) | $(qd d1) | $(qd d3) | $(nfilters $ALL)" "$SWEEP_OLD | clsact 8 10 | clsact 7 9 | 1 1 1 1 1 1" \
		"$w: v0 ends with $SWEEP_OLD, the other users and every block's one filter intact"
}
case_sweep() {
	local w="$who: fail-nth"
	if ! [ -d $FS ] || ! [ -w /proc/thread-self/fail-nth ]; then
		skip "$w sweep" "no failslab or fail-nth"
		return
	fi
	v0_set clsact 7 9
	REQ=(-r -H 0:0 -i 8 -R 0 v0 ingress)
	SWEEP_OLD="clsact 7 9" SWEEP_OLDD="2 0 2 0" SWEEP_NEW="ingress 8 -" SWEEP_NEWD="0 2 0 0"
	sweep "$w: clsact(7,9) by ingress(8) with an estimator" -r -H 0:0 -i 7 -e 9 v0 clsact
	v0_set ingress 7
	REQ=(-r -H 0:0 -i 8 -e 10 -R 0 v0 clsact)
	SWEEP_OLD="ingress 7 -" SWEEP_OLDD="2 0 0 0" SWEEP_NEW="clsact 8 10" SWEEP_NEWD="0 2 0 2"
	sweep "$w: ingress(7) by clsact(8,10) with an estimator" -r -H 0:0 -i 7 v0 ingress
}

case_held() {
	local kind w req e9 kind_new
	for kind in clsact ingress; do
		w="$who: $kind held by a filter request"
		if [ $kind = clsact ]; then
			v0_set clsact - 9
			req=(-r -H 0:0 -i 8 v0 ingress) e9=9 kind_new=ingress
		else
			v0_set ingress
			req=(-r -H 0:0 -i 8 -e 10 v0 clsact) e9='' kind_new=clsact
		fi
		tc filter add dev v0 ingress pref 10 protocol ip matchall action pass
		# shellcheck disable=SC2046
		flow "$w: before" v0:ingress/10=$P $(ex $e9)
		if ! hold_start tc filter add dev v0 ingress pref 5 protocol ip basic action pass; then
			not_ok "$w: a filter request holds v0's qdisc (the install rule never ran)"
			hold_end
			del_v0
			continue
		fi
		is "$($NL "${req[@]}")" "EBUSY: Current ingress or clsact Qdisc has ongoing filter requests" \
			"$w: a replace onto block 8 refused"
		is "$($NL "${req[@]:0:${#req[@]}-2}" -R 4 v0 $kind_new)" "EINVAL: Failed to generate new estimator" \
			"$w: a replace with an estimator that cannot start refused"
		if tc qdisc del dev v0 $kind 2>/dev/null; then not_ok "$w: delete refused"; else ok "$w: delete refused"; fi
		if [ $kind = clsact ]; then
			tc filter add block 9 pref 5 protocol ip $UNL action pass
			# shellcheck disable=SC2046
			flow "$w: after the refusals, and block 9 given a new head meanwhile" \
				v0:ingress/10=$P 9/5=$P $(ex)
		else
			# shellcheck disable=SC2046
			flow "$w: after the refusals" v0:ingress/10=$P $(ex)
		fi
		hold_end
		is "$hold_rc $(qd v0)" "0 $(if [ $kind = clsact ]; then echo "clsact - 9"; else echo "ingress - -"; fi)" \
			"$w: the held request added its filter to the qdisc that stayed"
		# shellcheck disable=SC2046
		flow "$w: let go, its filter (pref 5) is the ingress head" v0:ingress/5=$P v0:ingress/10=0 \
			$([ $kind = clsact ] && echo 9/5=$P) $(ex)
		tc filter del dev v0 ingress pref 5
		[ $kind = clsact ] && tc filter del block 9 pref 5
		# shellcheck disable=SC2046
		flow "$w: heads back to pref 10" v0:ingress/10=$P $(ex $e9)
		del_v0
	done
	modprobe -r cls_basic 2>/dev/null
}

case_race() {
	local w="$who: race" state out i bad havepg=0 b a T1=1
	dummy d4
	v0_set clsact 8 10
	state="clsact 8 10"
	# W1: RTNL-unlocked head changes on v0's blocks, old and new.
	for i in 2 3 4; do
		for b in 8 10 11 12; do
			echo "filter add block $b pref $i protocol ip $UNL action pass"
			echo "filter del block $b pref $i"
		done
	done >$T/w1.batch
	# W2: d4 joins and leaves blocks 8 and 10 (and is deleted once).
	cat >$T/w2.batch <<-EOF
		qdisc add dev d4 ingress_block 8 egress_block 10 clsact
		filter add block 8 pref 1 protocol ip $UNL action pass
		filter del block 8 pref 1
		qdisc del dev d4 clsact
		qdisc add dev d4 ingress_block 10 ingress
		qdisc del dev d4 ingress
	EOF
	# W3: unlocked filter requests on v0's qdisc (refused, as its blocks
	# are shared, after they held it).
	for i in $(seq 20); do
		echo "filter add dev v0 ingress pref 4 protocol ip $UNL action pass"
		echo "filter add dev v0 egress pref 4 protocol ip $UNL action pass"
	done >$T/w3.batch
	touch $RUN
	(while [ -e $RUN ]; do tc -force -batch $T/w1.batch; done) >/dev/null 2>&1 &
	pids+=($!)
	(i=0; while [ -e $RUN ]; do
		i=$((i + 1))
		tc -force -batch $T/w2.batch
		[ $i = 3 ] && ip link del d4 && dummy d4
	done) >/dev/null 2>&1 &
	pids+=($!)
	(while [ -e $RUN ]; do tc -force -batch $T/w3.batch; done) >/dev/null 2>&1 &
	pids+=($!)
	ping -q -i 0.01 -w 600 $B >$T/ping-out.txt 2>&1 &
	ping_pids+=($!)
	ip netns exec peer ping -q -i 0.01 -w 600 $A >$T/ping-in.txt 2>&1 &
	ping_pids+=($!)
	if modprobe pktgen 2>/dev/null && [ -e $PG/pgctrl ]; then
		havepg=1
		[ -e $PG/kpktgend_1 ] || T1=0
		pg_rem
		pg_add 0 d1 netif_receive 0 02:00:00:00:00:02 500
		pg_add $T1 v0 queue_xmit 0 "$MAC1" 500
		(echo start >$PG/pgctrl) 2>/dev/null &
		pids+=($!)
	fi
	for i in $(seq "$R"); do
		if [ "$state" = "clsact 8 10" ]; then
			echo "a $($NL -r -H 0:0 -i 8 v0 ingress)"
			echo "b $($NL -r -H 0:0 -i 12 -R 4 v0 ingress)"
			out=$($NL -r -H 0:0 -i 11 v0 ingress)
			echo "c $out"
			[ "$out" = OK ] && state="ingress 11 -"
		else
			echo "d $($NL -r -H 0:0 -i 8 -e 11 v0 clsact)"
			echo "e $($NL -r -H 0:0 -i 8 -e 12 -R 4 v0 clsact)"
			out=$($NL -r -H 0:0 -i 8 -e 10 v0 clsact)
			echo "f $out"
			[ "$out" = OK ] && state="clsact 8 10"
		fi
	done >$T/replace.out
	bg_stop
	ok "$w: $R rounds of replaces under unlocked filter churn, d4 joining and leaving, pings and pktgen"
	bad=$(grep -vE '^[ad] EBUSY: block dev insert failed$|^[be] EINVAL: Failed to generate new estimator$|^[cf] (OK|EBUSY: Current ingress or clsact Qdisc has ongoing filter requests)$' $T/replace.out | sort | uniq -c | tr -s '\n' ';')
	is "$bad" "" "$w: every request answered as it must (EBUSY at init, EINVAL at the estimator, OK or EBUSY held)"
	diag "$w: $(grep -c ' OK$' $T/replace.out) replaces OK, $(grep -c 'ongoing' $T/replace.out) refused as held; pings out $(grep -o '[0-9]* received' $T/ping-out.txt), in $(grep -o '[0-9]* received' $T/ping-in.txt)"
	ip link del d4 2>/dev/null
	is "$(qd v0) | $(nfilters $ALL)" "$state | 1 1 1 1 1 1" \
		"$w: v0 has the qdisc of the last replace that succeeded; each block its one filter"
	# shellcheck disable=SC2046
	if [ "$state" = "clsact 8 10" ]; then
		flow "$w: afterwards exactly v0's blocks 8 and 10 count" $(ex 8 10)
	else
		flow "$w: afterwards exactly v0's block 11 counts" $(ex 11)
	fi
	if [ $havepg = 1 ]; then
		b=$(cnt 8/10)
		pg_rem
		pg_add 0 d1 netif_receive 40 02:00:00:00:00:02
		echo start >$PG/pgctrl
		a=$(cnt 8/10)
		is "$(delta "$b" "$a")" 40 "$w: d1's receive hook still counts 40 pktgen packets on block 8"
		pg_rem
	fi
}

case_users() {
	local w="$who: block 8's other users leave"
	dummy d4
	v0_set ingress 8
	tc qdisc add dev d4 ingress_block 8 egress_block 10 clsact
	# shellcheck disable=SC2046
	flow "$w: v0's ingress on block 8, shared with d1 and d4" $(ex 8)
	tc qdisc del dev d1 clsact
	# shellcheck disable=SC2046
	flow "$w: d1's clsact deleted" $(ex 8)
	ip link del d4
	is "$(nfilters 8 10)" "1 0" "$w: d4 deleted: block 8 kept by v0 with its filter, block 10 gone with its last user"
	ALL="7 8 9 11 12"
	# shellcheck disable=SC2046
	flow "$w: v0 block 8's last user" $(ex 8)
	# block 8 goes with its last user, and comes back without a filter:
	# until one is added, nothing on it can count
	ALL="7 9 11 12"
	attempt "$w: v0's ingress(8) by clsact(11,12), block 8 going with it" OK "clsact 11 12" "11 12" \
		-r -H 0:0 -i 11 -e 12 v0 clsact
	attempt "$w: clsact(11,12) by ingress on a new, empty block 8" OK "ingress 8 -" "" -r -H 0:0 -i 8 v0 ingress
	is "$(nfilters 8)" 0 "$w: the new block 8 has no filter"
	tc filter add block 8 pref 10 protocol ip matchall action pass
	ALL="7 8 9 11 12"
	# shellcheck disable=SC2046
	flow "$w: a filter added to the new block 8 counts at once" $(ex 8)
	tc qdisc add dev d1 ingress_block 8 egress_block 10 clsact
	tc filter add block 10 pref 10 protocol ip matchall action pass
	ALL="7 8 9 10 11 12"
	# shellcheck disable=SC2046
	flow "$w: d1 back on blocks 8 and 10" $(ex 8)
}

case_netns() {
	local w variant hp specs i dp
	if ! modinfo cls_basic >/dev/null 2>&1; then
		skip "$who: netns moves under a held filter request" "no cls_basic module"
		return
	fi
	ip netns add $MV
	ip netns exec $MV sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	ip netns exec $MV sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	dummy d4
	tc qdisc add dev d4 ingress_block 41 ingress
	tc filter add block 41 pref 10 protocol ip matchall action pass
	for variant in behind head; do
		w="$who: netns move, held filter $variant"
		del_v0
		tc qdisc add dev v0 egress_block 41 clsact
		tc filter add dev v0 ingress pref 10 protocol ip matchall action pass
		VNS='' flow "$w: v0's clsact (own ingress block, egress on block 41) counts" v0:ingress/10=$P 41/10=$P
		hp=20
		[ $variant = head ] && hp=5
		if ! hold_start tc filter add dev v0 ingress pref $hp protocol ip basic action pass; then
			not_ok "$w: a filter request holds v0's clsact (the install rule never ran)"
			hold_end
			continue
		fi
		check "$w: v0 moved to netns $MV while held" ip link set dev v0 netns $MV
		check "$w: v0 set up in $MV" v0_home $MV
		# The held qdisc left v0 but was not destroyed: its filters
		# must not run for v0 in its new netns, with no qdisc there or
		# with one that has no filters yet.
		VNS=$MV flow "$w: v0 in $MV without a qdisc: block 41 (the held qdisc's, old netns) counts nothing" 41/10=0
		check "$w: a new clsact on $MV's blocks 21 and 22" tc -n $MV qdisc add dev v0 ingress_block 21 egress_block 22 clsact
		VNS=$MV flow "$w: v0's new clsact, no filters yet: block 41 counts nothing" 41/10=0
		check "$w: filters on blocks 21 and 22" bash -c "
			tc -n $MV filter add block 21 pref 10 protocol ip matchall action pass &&
			tc -n $MV filter add block 22 pref 10 protocol ip matchall action pass"
		specs=("$MV%21/10=$P" "$MV%22/10=$P" 41/10=0)
		VNS=$MV flow "$w: the new clsact counts both ways, block 41 nothing" "${specs[@]}"
		if [ $variant = head ]; then
			# A new head on block 41, from the old netns: the held
			# qdisc, off v0 but still on block 41, hears of it.
			tc filter add block 41 pref 5 protocol ip $UNL action pass
			specs+=(41/5=0)
			VNS=$MV flow "$w: block 41 given a new head from the old netns: v0 in $MV still counts only on its own blocks" "${specs[@]}"
		fi
		hold_end
		diag "$w: the held request ended ($hold_rc): $(tr '\n' ' ' <$T/hold.out)"
		is "$(qd v0 $MV)" "clsact 21 22" "$w: v0 in $MV keeps its clsact"
		VNS=$MV flow "$w: the held request ended, its qdisc destroyed: v0's new clsact still counts both ways" "${specs[@]}"
		# A head change on the new qdisc's blocks: counts again.
		for i in 21 22; do
			tc -n $MV filter add block $i pref 5 protocol ip $UNL action pass
			tc -n $MV filter del block $i pref 5
		done
		VNS=$MV flow "$w: after a head change on its own blocks, v0's clsact counts both ways" "${specs[@]}"
		[ $variant = head ] && tc filter del block 41 pref 5
		check "$w: v0 moved back" ip -n $MV link set dev v0 netns $$
		check "$w: v0 set up again" v0_home
		is "$(qd v0)" "none" "$w: v0 came back without a qdisc"
	done
	# v0 deleted while a filter request holds its qdisc, whose shared block
	# changes head meanwhile: the deletion waits for the request, nothing
	# else happens.
	w="$who: v0 deleted while held"
	ip link set dev v0 netns $MV && v0_home $MV &&
		tc -n $MV qdisc add dev v0 ingress_block 21 egress_block 22 clsact &&
		tc -n $MV filter add block 21 pref 10 protocol ip matchall action pass
	if hold_start tc -n $MV filter add dev v0 ingress pref 5 protocol ip basic action pass; then
		ip -n $MV link del v0 &
		dp=$!
		sleep 1
		tc -n $MV filter add block 21 pref 3 protocol ip $UNL action pass 2>/dev/null
		kill -0 $dp 2>/dev/null && diag "$w: the deletion waits for the held request, as it should"
		hold_end
		for i in $(seq 100); do kill -0 $dp 2>/dev/null || break; sleep 0.2; done
		if kill -0 $dp 2>/dev/null; then
			not_ok "$w: the deletion ends once the request is let go"
		else
			wait $dp
			ok "$w: the deletion ends once the request is let go"
		fi
		is "$(ip -n $MV -br link show v0 2>/dev/null | wc -l) $(ip -n peer -br link show v1 2>/dev/null | wc -l)" "0 0" \
			"$w: v0 and v1 are gone"
	else
		not_ok "$w: a filter request holds v0's clsact (the install rule never ran)"
		hold_end
	fi
	modprobe -r cls_basic 2>/dev/null
}

# ------------------------------------------------------------- main
[ -x "$NL" ] || { not_ok "no $NL"; done_testing; }
mkdir -p $T
sysctl -qw net.ipv6.conf.default.disable_ipv6=1
modprobe dummy && modprobe veth && modprobe cls_matchall && modprobe act_gact ||
	{ not_ok "cannot load dummy, veth, cls_matchall or act_gact"; done_testing; }
modprobe cls_flower 2>/dev/null || { UNL=matchall; diag "no cls_flower: filter churn takes RTNL (matchall)"; }
if [ -d $FS ]; then
	old_fs=$(cat $FS/ignore-gfp-wait)
	echo N >$FS/ignore-gfp-wait && echo 0 >$FS/probability && echo 0 >$FS/verbose
fi
[ -w $KML ] && echo clear >$KML 2>/dev/null
diag "core fix present: $FIXED; $P pings per count, fail-nth up to $SWEEP, $R race rounds"
for mod in sch_clsact sch_ingress; do
	who=$mod
	[ $mod = sch_clsact ] && who=ours
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	if ! modprobe --ignore-install $mod; then
		not_ok "$who: load $mod"
		continue
	fi
	ok "$who: load $mod"
	mark="replace-attack: $who begins $$"
	echo "$mark" >/dev/kmsg
	topology_up
	MAC0=$(ip -br link show v0 | awk '{print $3}')
	MAC1=$(ip -n peer -br link show v1 | awk '{print $3}')
	for d in d1 d2 d3; do dummy $d; done
	tc qdisc add dev d3 ingress_block 7 egress_block 9 clsact
	tc qdisc add dev d1 ingress_block 8 egress_block 10 clsact
	tc qdisc add dev d2 ingress_block 11 egress_block 12 clsact
	for b in $ALL; do tc filter add block "$b" pref 10 protocol ip matchall action pass; done
	is "$(qd d3) | $(qd d1) | $(qd d2) | $(nfilters $ALL)" "clsact 7 9 | clsact 8 10 | clsact 11 12 | 1 1 1 1 1 1" \
		"$who: blocks 7-12 on dummies d1-d3, one counting filter each"
	t0=$SECONDS
	for c in success batch sweep held race users netns; do
		case_$c
		diag "$who: case $c done at $((SECONDS - t0)) s"
	done
	net_down
	[ $who = ours ] && is "$(cat $PARAM)" 0 "ours: no hook key wanted once every qdisc is gone"
	bad=$(kmsg_since "$mark" | grep -E "$BAD_KMSG" | head -20)
	is "$bad" "" "$who: no kernel warning, bug or leak report meanwhile"
	check "$who: $mod unloads" modprobe -r $mod
done
if [ -w $KML ] && [ "${CLSACT_KMEMLEAK:-1}" = 1 ]; then
	sleep 6
	echo scan >$KML
	n=$(awk '/^unreferenced object/ {if (hit) n++; hit = 0}
		/^    [A-Za-z_][A-Za-z0-9_.]*\+0x/ && /sch_|cls_|tcf_|qdisc|tcx_|mini_qdisc|gen_new_estimator|tc_new_|tc_modify/ {hit = 1}
		END {if (hit) n++; print n + 0}' $KML)
	is "$n" 0 "kmemleak: no unreferenced object allocated by the qdisc or classifier code"
	[ "$n" = 0 ] || head -60 $KML | sed 's/^/# /'
fi
done_testing
