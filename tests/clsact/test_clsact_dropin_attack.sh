#!/bin/bash
# An attack on the sch-clsact-dkms drop-in contract (make stock-check:
# Debian's kernel, the package's install rule in /run/modprobe.d, our module
# in updates/dkms): tc's ingress and clsact keep working, sch_clsact serves
# them wherever DKMS built it, the kernel's sch_ingress only where ours is
# missing (the package's own file says so), and removing the package gives
# the kernel's back. test_clsact_debian_dropin.sh takes each path once, one
# at a time; this takes the paths it does not: eight alias loads at once
# from cold, with our module and without it; an unload refused while in
# use; the other load commands while ours serves; module parameters through
# the rule, a good one and one sch_clsact refuses; an administrator's own
# options, blacklist and install lines beside the package's; the package
# removed while ours serves; and ours unloaded while alias loads run.
# Loaded is judged by /proc/modules (Live), never by modprobe's exit status
# alone: a load whose init fails with EEXIST is a success to modprobe.
#
. "$(dirname "$0")/../lib/tap.sh"
PKG=/bench/pkg
CONF=$PKG/usr/lib/modprobe.d/sch-clsact-dkms.conf
RUN=/run/modprobe.d
USER_CONF=$RUN/zz-dropin-attack.conf
[ -d $PKG ] || { skip "drop-in attacks" "no sch-clsact-dkms package staged (only on make stock-check)"; done_testing; }
command -v flock >/dev/null || { skip "drop-in attacks" "no flock(1) to start loads at once"; done_testing; }

KVER=$(uname -r)
DKMS_DIR=/lib/modules/$KVER/updates/dkms
P=/sys/module/sch_clsact/parameters
N=8
KINDS=(clsact clsact clsact clsact clsact ingress ingress ingress)
EXPECT="atk0=clsact atk1=clsact atk2=clsact atk3=clsact atk4=clsact atk5=ingress atk6=ingress atk7=ingress"
LOADERS=4
T=$(mktemp -d /tmp/dropin-attack.XXXXXX) || { not_ok "mktemp -d"; done_testing; }
mounted="" pids=()

# state: which of the two modules are live: none, sch_clsact, sch_ingress
# or sch_clsact+sch_ingress (a load still in progress or failing is not)
state() {
	awk '$5 == "Live" && $1 == "sch_clsact" {c = 1}
		$5 == "Live" && $1 == "sch_ingress" {i = 1}
		END {print c && i ? "sch_clsact+sch_ingress" : c ? "sch_clsact" : i ? "sch_ingress" : "none"}' /proc/modules
}
refs() { cat "/sys/module/$1/refcnt" 2>/dev/null || echo -; }
delay() { cat $P/release_delay_ms 2>/dev/null || echo -; }
rcw() { if [ "$1" -eq 0 ]; then echo ok; else echo fails; fi; }
# qdiscs: "atkI=KIND" for each ingress/clsact qdisc on our devices
qdiscs() {
	tc qdisc show | awk '$1 == "qdisc" && $3 == "ffff:" && $4 == "dev" && $5 ~ /^atk[0-9]+$/ {print $5 "=" $2}' |
		sort | tr '\n' ' ' | sed 's/ $//'
}
# cold WHAT: devices atk0..atk7 afresh (no qdisc, no filter), neither
# module loaded
cold() {
	local i
	for ((i = 0; i < N; i++)); do echo "link del atk$i"; echo "link add atk$i type dummy"; done |
		ip -force -batch - >/dev/null 2>&1
	modprobe -r sch_clsact sch_ingress 2>/dev/null
	[ "$(state)" = none ] || { not_ok "$1: start with neither module loaded"; diag "loaded: $(state)"; }
}
# burst: tc qdisc add dev atkI ${KINDS[I]} for every I, all released at
# once from behind a lock; BURST_OK is how many succeeded.
burst() {
	local i w=0 bp=()
	rm -f "$T"/rc.* "$T"/out.*
	: >"$T/ready"
	exec 8>"$T/gate"
	flock -x 8
	for ((i = 0; i < N; i++)); do
		(
			exec 8>&-
			echo >>"$T/ready"
			flock -s "$T/gate" tc qdisc add dev "atk$i" "${KINDS[i]}" >"$T/out.$i" 2>&1
			echo $? >"$T/rc.$i"
		) &
		bp+=($!)
	done
	pids=("${bp[@]}")
	while [ "$(wc -l <"$T/ready")" -lt $N ] && [ $w -lt 200 ]; do sleep 0.05; w=$((w + 1)); done
	sleep 0.5 # each is in flock by now
	flock -u 8
	exec 8>&-
	wait "${bp[@]}"
	pids=()
	BURST_OK=$(cat "$T"/rc.* 2>/dev/null | grep -cx 0)
	for ((i = 0; i < N; i++)); do
		[ "$(cat "$T/rc.$i" 2>/dev/null)" = 0 ] || diag "atk$i ${KINDS[i]}: rc $(cat "$T/rc.$i" 2>/dev/null): $(cat "$T/out.$i" 2>/dev/null)"
	done
}
restore_conf() {
	rm -f $USER_CONF
	cp "$T/sch-clsact-dkms.conf" $RUN/
}
start=$(state)
start_delay=$(delay)
start_mods=" $(awk '{printf "%s ", $1}' /proc/modules)"
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local p m
	touch "$T/stop"
	for p in "${pids[@]}"; do kill "$p"; done
	[ ${#pids[@]} -eq 0 ] || wait "${pids[@]}"
	[ -z "$mounted" ] || umount "$DKMS_DIR"
	[ -e "$T/sch-clsact-dkms.conf" ] && restore_conf
	for ((p = 0; p < N; p++)); do echo "link del atk$p"; done | ip -force -batch -
	modprobe -r sch_clsact sch_ingress
	case $start in
	*sch_clsact*) modprobe --ignore-install sch_clsact && echo "$start_delay" >"$P/release_delay_ms" ;;
	esac
	case $start in *sch_ingress) modprobe --ignore-install sch_ingress ;; esac
	# dummy stays: the other lane's tests may have dummy devices now
	for m in act_gact cls_matchall; do
		case $start_mods in *" $m "*) ;; *) modprobe -r "$m" ;; esac
	done
	rm -rf "$T"
} >/dev/null 2>&1
trap cleanup EXIT

if cmp -s $CONF $RUN/sch-clsact-dkms.conf && cp $RUN/sch-clsact-dkms.conf "$T/"; then
	ok "the package's install rule is the one in force"
else
	not_ok "the package's install rule is the one in force"
	done_testing
fi
ko=$(modinfo -n sch_clsact 2>/dev/null)
if [ "${ko%/*}" = "$DKMS_DIR" ] && [ -e "$ko" ]; then
	ok "our sch_clsact.ko is in updates/dkms"
else
	not_ok "our sch_clsact.ko is in updates/dkms: '$ko'"
	done_testing
fi
modprobe dummy
cold "the attacks"
[ "$(state)" = none ] || done_testing

# unloads_clean DESC: modprobe -r sch_clsact succeeds and leaves neither
# module loaded
unloads_clean() {
	local rc=0
	modprobe -r sch_clsact 2>/dev/null || rc=$?
	is "$(rcw $rc) $(state)" "ok none" "$1"
}

# 1. Eight alias loads at once from cold, five net-sch-clsact and three
# net-sch-ingress: the kernel runs "modprobe -q -- net-sch-..." for each,
# every one finds both modules under the alias, and each goes through the
# rule. Each tc must succeed, sch_clsact alone must end up loaded (the
# kernel's sch_ingress is reached only when a load of ours fails), and it
# must hold exactly one module reference per qdisc: a request that had to
# load the module drops the reference its second lookup took, and replays.
burst
is "$BURST_OK" $N "from cold, $N tc qdisc add at once (5 clsact, 3 ingress) all succeed"
is "$(state)" sch_clsact "exactly sch_clsact is loaded, never the kernel's sch_ingress"
is "$(qdiscs)" "$EXPECT" "every device has its qdisc"
is "$(refs sch_clsact)" $N "sch_clsact holds one reference per qdisc, none leaked by the racing loads"

# 2. Unload while in use: refused, and the qdiscs keep working (a filter
# on atk0's ingress reaches our module: one direction wants its key).
# Once they are deleted it unloads.
modprobe -r sch_clsact 2>/dev/null
rc=$?
is "$(rcw $rc) $(state)" "fails sch_clsact" "modprobe -r sch_clsact with $N qdiscs fails and leaves it loaded"
is "$(qdiscs)" "$EXPECT" "the qdiscs survive the refused unload"
check "and take a filter: tc filter add dev atk0 ingress matchall" tc filter add dev atk0 ingress matchall action pass
is "$(cat $P/keys_wanted 2>/dev/null)" 1 "served by sch_clsact: atk0's ingress wants its key"
for ((i = 0; i < N; i++)); do echo "qdisc del dev atk$i ${KINDS[i]}"; done | tc -batch - >/dev/null 2>&1
unloads_clean "with the qdiscs deleted, modprobe -r sch_clsact unloads it"

# 3. Ours serving: a load of sch_ingress by name (the rule: ours is already
# loaded, so nothing else), the kernel's by --ignore-install (its init
# fails with EEXIST: the names are taken), and the rule with a parameter
# ours would refuse (nothing is inserted, so nothing is refused and the
# rule does not fall back): exactly sch_clsact stays, with its qdisc, its
# one reference and its default delay.
tc qdisc add dev atk0 clsact
rc=$?
is "$(rcw $rc) $(state)" "ok sch_clsact" "tc qdisc add dev atk0 clsact loads sch_clsact"
modprobe sch_ingress
rc=$?
is "$(rcw $rc) $(state) $(qdiscs) $(refs sch_clsact)" "ok sch_clsact atk0=clsact 1" \
	"with sch_clsact serving, modprobe sch_ingress succeeds and changes nothing"
modprobe --ignore-install sch_ingress 2>/dev/null
is "$(state) $(qdiscs) $(refs sch_clsact)" "sch_clsact atk0=clsact 1" \
	"modprobe --ignore-install sch_ingress cannot load the kernel's beside it"
modprobe sch_ingress release_delay_ms=99999999 2>/dev/null
rc=$?
is "$(rcw $rc) $(state) $(delay)" "ok sch_clsact 1000" \
	"modprobe sch_ingress release_delay_ms=99999999 with sch_clsact loaded: nothing loads, the delay stays 1000"

# 4. Parameters through the rule ($CMDLINE_OPTS). A good one reaches
# sch_clsact. One it refuses (over the hour's maximum: EINVAL from its
# setter, so the load fails) must fail the same way through the rule and
# load nothing: ours is present, it refused, and the contract falls back to
# the kernel's module only where ours is missing. The kernel's would load
# here (it ignores a parameter it does not know) and from then on serve
# every qdisc in place of ours.
cold "parameters"
modprobe sch_ingress release_delay_ms=0
rc=$?
is "$(rcw $rc) $(state) $(delay)" "ok sch_clsact 0" "modprobe sch_ingress release_delay_ms=0 loads sch_clsact with it"
cold "a refused parameter"
modprobe --ignore-install sch_clsact release_delay_ms=99999999 2>/dev/null
rc=$?
is "$(rcw $rc) $(state)" "fails none" "sch_clsact itself refuses release_delay_ms=99999999"
modprobe sch_ingress release_delay_ms=99999999 2>/dev/null
rc=$?
is "$(rcw $rc) $(state)" "fails none" \
	"so modprobe sch_ingress release_delay_ms=99999999 fails, not loading the kernel's sch_ingress instead"

# 5. What modprobe sch_ingress loaded, modprobe -r sch_ingress unloads: a
# script that loads and unloads by the name it knows must not leave a
# module behind.
cold "modprobe -r sch_ingress"
modprobe sch_ingress
s=$(state)
modprobe -r sch_ingress 2>/dev/null
is "$s -> $(state)" "sch_clsact -> none" "modprobe sch_ingress, then modprobe -r sch_ingress: nothing is left loaded"

# 6. An administrator's own lines about sch_clsact (here in /run, as if in
# /etc/modprobe.d) beside the package's rule. Options reach it through
# tc's alias load. Options it refuses must make the load fail as they
# would for any module (as in 4), not hand every qdisc to the kernel's
# module. "blacklist sch_clsact" keeps it out of alias loads, and
# "install sch_clsact /bin/false" out of every load: with either, tc's
# alias load must get the kernel's sch_ingress, which is what the
# administrator is left with (the package's rule looks for both lines).
echo "options sch_clsact release_delay_ms=0" >$USER_CONF
cold "options sch_clsact"
tc qdisc add dev atk0 clsact
rc=$?
is "tc:$(rcw $rc) $(state) $(delay)" "tc:ok sch_clsact 0" "options sch_clsact release_delay_ms=0 reaches it through tc's alias load"
echo "options sch_clsact release_delay_ms=99999999" >$USER_CONF
cold "refused options"
tc qdisc add dev atk0 clsact 2>/dev/null
rc=$?
is "tc:$(rcw $rc) $(state)" "tc:fails none" \
	"options sch_clsact release_delay_ms=99999999: tc's load fails, the kernel's sch_ingress not loaded instead"
echo "blacklist sch_clsact" >$USER_CONF
cold "blacklist sch_clsact"
tc qdisc add dev atk0 clsact
rc=$?
is "tc:$(rcw $rc) $(state)" "tc:ok sch_ingress" "blacklist sch_clsact: tc's alias load gets the kernel's sch_ingress"
echo "install sch_clsact /bin/false" >$USER_CONF
cold "install sch_clsact /bin/false"
modprobe sch_clsact 2>/dev/null
rc=$?
is "$(rcw $rc) $(state)" "fails none" "install sch_clsact /bin/false is in force: modprobe sch_clsact loads nothing"
tc qdisc add dev atk0 clsact
rc=$?
is "tc:$(rcw $rc) $(state)" "tc:ok sch_ingress" "and tc's alias load gets the kernel's sch_ingress, not sch_clsact"
restore_conf

# 7. Our module unreachable (a kernel DKMS did not build for), eight alias
# loads at once: each rule's load of ours fails, each falls back, the
# kernel's sch_ingress loads once and serves all. Then ours reachable
# again, and the kernel's unloaded: the next alias load takes ours.
cold "no module of ours"
mount -t tmpfs none "$DKMS_DIR" && mounted=1
if [ ! -e "$ko" ]; then
	burst
	is "$BURST_OK" $N "without our module, $N tc qdisc add at once all succeed"
	is "$(state)" sch_ingress "served by the kernel's sch_ingress alone"
	is "$(qdiscs)" "$EXPECT" "every device has its qdisc"
	is "$(refs sch_ingress)" $N "sch_ingress holds one reference per qdisc"
else
	not_ok "sch_clsact.ko made unreachable"
fi
cold "our module back"
umount "$DKMS_DIR" && mounted=
tc qdisc add dev atk0 clsact
rc=$?
is "tc:$(rcw $rc) $(state)" "tc:ok sch_clsact" "with our module back and the kernel's unloaded, tc's alias load takes sch_clsact"

# 8. The package removed (its modprobe.d file and module file gone) while
# ours serves: it keeps serving, new qdiscs too; once they are deleted it
# unloads, and the next alias load gets the kernel's sch_ingress.
cold "removal while serving"
tc qdisc add dev atk0 clsact
s=$(state)
rm $RUN/sch-clsact-dkms.conf
mount -t tmpfs none "$DKMS_DIR" && mounted=1
tc qdisc add dev atk1 ingress
rc=$?
is "$s tc:$(rcw $rc) $(state) $(refs sch_clsact)" "sch_clsact tc:ok sch_clsact 2" \
	"package removed while sch_clsact serves: it keeps serving, a new ingress qdisc included"
printf 'qdisc del dev atk0 clsact\nqdisc del dev atk1 ingress\n' | tc -batch - >/dev/null 2>&1
unloads_clean "once its qdiscs are deleted it unloads"
tc qdisc add dev atk1 clsact
rc=$?
is "tc:$(rcw $rc) $(state)" "tc:ok sch_ingress" "and the next alias load gets the kernel's sch_ingress"
umount "$DKMS_DIR" && mounted=
restore_conf

# 9. Ours unloaded while alias loads run ($LOADERS loops of the kernel's
# own request, modprobe -q -- net-sch-clsact). While an unload is in
# progress the kernel refuses a new load of the same name with EBUSY (not
# EEXIST); the rule takes any failure of ours for absence, so a load landing
# in that window loads the kernel's sch_ingress, which then keeps ours out.
# After each unload the loops must load ours again, never the kernel's.
# A race: it fails only when a load lands in the window, so a pass here
# proves less than a failure does.
cold "unload under alias loads"
modprobe sch_ingress
rm -f "$T/stop"
for ((j = 0; j < LOADERS; j++)); do
	(while [ ! -e "$T/stop" ]; do modprobe -q -- net-sch-clsact; done) >/dev/null 2>&1 &
	pids+=($!)
done
unloads=0 seen=$(state)
for ((r = 0; r < 5; r++)); do
	[ "$(state)" = sch_clsact ] || break
	modprobe -r sch_clsact 2>/dev/null && unloads=$((unloads + 1))
	for ((w = 0; w < 50; w++)); do
		[ "$(state)" = none ] || break
		sleep 0.1
	done
	seen="$seen $(state)"
done
touch "$T/stop"
wait "${pids[@]}"
pids=()
if [ $unloads -gt 0 ]; then
	ok "sch_clsact unloaded $unloads times while $LOADERS loops loaded net-sch-clsact"
else
	not_ok "sch_clsact unloaded while $LOADERS loops loaded net-sch-clsact"
fi
want=$(for s in $seen; do printf 'sch_clsact '; done)
is "$seen" "${want% }" "after every unload the alias loads brought back sch_clsact, never the kernel's sch_ingress"

done_testing
