#!/bin/bash
# configfs binary attribute uploads (seed 008): our doubling buffer against
# 6.12's configfs (built from the pristine tree as configfs_pristine.ko),
# loaded in turn in this one boot. Prints times and ratios; the ratios are
# what counts. make configfs-bench counts instructions (-icount), so a
# "ms" is a million instructions; wall-clock TCG drifts between runs.
. /bench/tests/configfs/lib.sh
. /bench/benchmarks/lib.sh

MiB=$((1 << 20))
STORE=$CONFIGFS/lk45_blobstore/bench
SAMPLE=/lib/modules/$(uname -r)/extra/lk45_blobstore.ko
UPLOADBENCH=/bench/tests/configfs/uploadbench
TMPFS=/run/configfs-bench-tmpfs
# Skip a 6.12 case whose predicted time passes this (the cost is quadratic).
PRISTINE_CAP_S=${PRISTINE_CAP_S:-240}

declare -A T	# T[impl:size:chunk] = ns

say() { echo "configfs-bench: $*"; }

declare -A RUNS	# RUNS[impl:size:chunk] = "ns ns ..."

# upload1 IMPL SIZE_MIB CHUNK: one upload, its time appended to RUNS.
upload1() {
	local out
	# Untimed: replace the stored blob by one byte first, so that freeing
	# the previous upload's blob is not charged to this one.
	$BLOBPUT $STORE/blob -p 1 >/dev/null
	# ours-fsync commits with fsync(2) before close(2)
	local f=
	[ "$1" != ours-fsync ] || f=-f
	out=$($BLOBPUT $f $STORE/blob -p $(($2 * MiB)) "$3") ||
		{ say "FAILED $1 $2 MiB in $3 B writes: $out"; return 1; }
	RUNS[$1:$2:$3]+="${out##*ns=} "
}

# ub1 NAME MODE PATH SIZE_MIB: one uploadbench run (4 KiB writes), its
# time appended to RUNS[NAME:SIZE:4096]. The same program writes the
# attribute and the tmpfs file, so that their rows compare like for like.
ub1() {
	local out
	$BLOBPUT $STORE/blob -p 1 >/dev/null
	rm -f $TMPFS/blob
	out=$($UPLOADBENCH "$2" "$3" $(($4 * MiB)) 4096) ||
		{ say "FAILED $1: $2 into $3, $4 MiB: $out"; return 1; }
	RUNS[$1:$4:4096]+="${out##*ns=} "
}

# settle IMPL SIZE CHUNK: the median of the runs into T, and a line.
settle() {
	local k=$1:$2:$3 n
	n=$(echo ${RUNS[$k]} | wc -w)
	T[$k]=$(echo ${RUNS[$k]} | tr ' ' '\n' | median)
	say "$(printf '%-10s %3d MiB in %6d B writes: %12.3f ms (median of %d)' "$1" "$2" "$3" \
		"$(echo "${T[$k]} / 1000000" | bc -l)" "$n")"
}

# upload IMPL SIZE_MIB CHUNK [RUNS]: RUNS uploads of one size, settled.
upload() {
	local i
	for i in $(seq "${4:-5}"); do upload1 "$1" "$2" "$3" || return 1; done
	settle "$1" "$2" "$3"
}

ratio() { echo "scale=3; $1 / $2" | bc -l; }

store_up() {	# IMPL: mount configfs and the sample on the loaded configfs
	mountpoint -q $CONFIGFS || mount -t configfs none $CONFIGFS || return 1
	insmod "$SAMPLE" max_blob=$((64 * MiB)) && mkdir $STORE
}

store_down() {
	rmdir $STORE && rmmod lk45_blobstore && umount $CONFIGFS
}

mkdir -p $TMPFS && mount -t tmpfs -o size=128m none $TMPFS ||
	{ say "cannot mount a tmpfs at $TMPFS"; exit 1; }
modprobe configfs && store_up || { say "cannot set up our configfs"; exit 1; }
say "ours: configfs with the series; sample lk45_blobstore, blob attribute"
# Warm-up, not measured: the guest's first touch of its memory is slow
# under TCG and would land on whichever series runs first.
$BLOBPUT $STORE/blob -p $((64 * MiB)) 131072 >/dev/null &&
	$BLOBPUT $STORE/blob -p $((64 * MiB)) 4096 >/dev/null
# Rounds interleave the sizes (and an A/A twin of 16 MiB), so that drift
# over the boot lands on every size alike.
for chunk in 4096 131072; do
	for r in $(seq "${CONFIGFS_BENCH_ROUNDS:-9}"); do
		for mib in 1 2 16 32 64; do upload1 ours $mib $chunk || exit 1; done
		[ $chunk = 131072 ] || upload1 ours-again 16 4096 || exit 1
		[ $chunk = 131072 ] || upload1 ours-fsync 16 4096 || exit 1
		[ $chunk = 131072 ] || for mib in 16 32; do
			ub1 ours-write write $STORE/blob $mib &&
				ub1 ours-fdatasync fdatasync $STORE/blob $mib &&
				ub1 ours-descending descending $STORE/blob $mib &&
				ub1 tmpfs-write write $TMPFS/blob $mib || exit 1
		done
	done
	for mib in 1 2 16 32 64; do settle ours $mib $chunk; done
done
settle ours-again 16 4096
settle ours-fsync 16 4096
for row in ours-write ours-fdatasync ours-descending tmpfs-write; do
	for mib in 16 32; do settle $row $mib 4096; done
done
rm -f $TMPFS/blob
store_down && rmmod configfs || { say "cannot unload our configfs"; exit 1; }

insmod /bench/pristine/configfs_pristine.ko && store_up ||
	{ say "cannot set up 6.12's configfs"; exit 1; }
say "6.12: configfs_pristine.ko, same sample"
for chunk in 131072 4096; do
	for mib in 1 16 64; do
		# Predict from the last size: quadratic in the size.
		if [ "$mib" = 64 ] && [ -n "${T[pristine:16:$chunk]:-}" ] &&
			[ "$(echo "${T[pristine:16:$chunk]} * 16 / 1000000000 > $PRISTINE_CAP_S" | bc)" = 1 ]; then
			say "6.12     64 MiB in $chunk B writes: not run, predicted over ${PRISTINE_CAP_S}s (16x the 16 MiB time)"
			continue
		fi
		upload pristine $mib $chunk 1 || exit 1
	done
done
store_down && rmmod configfs_pristine || { say "cannot unload 6.12's configfs"; exit 1; }

say "--- ratios (same boot)"
say "A/A: ours 16 MiB in 4 KiB writes, second series / first: $(ratio "${T[ours-again:16:4096]}" "${T[ours:16:4096]}")"
say "ours 16 MiB in 4 KiB writes, committed by fsync(2) / by close(2): $(ratio "${T[ours-fsync:16:4096]}" "${T[ours:16:4096]}")"
for chunk in 4096 131072; do
	for mib in 1 16 64; do
		[ -n "${T[pristine:$mib:$chunk]:-}" ] || continue
		say "6.12 / ours, $mib MiB in $chunk B writes: $(ratio "${T[pristine:$mib:$chunk]}" "${T[ours:$mib:$chunk]}")x"
	done
	for n in 1 16 32; do
		say "ours t(2N)/t(N), N=$n MiB, $chunk B writes: $(ratio "${T[ours:$((2 * n)):$chunk]}" "${T[ours:$n:$chunk]}")"
	done
done
say "ours 16 MiB in 4 KiB writes, fdatasync(2) after each (EINVAL, commits nothing) / none: $(ratio "${T[ours-fdatasync:16:4096]}" "${T[ours-write:16:4096]}") (goal <= 1.5)"
for row in ours-fdatasync ours-descending ours-write tmpfs-write; do
	say "$row t(2N)/t(N), N=16 MiB, 4 KiB writes: $(ratio "${T[$row:32:4096]}" "${T[$row:16:4096]}") (goal <= 2.2)"
done
say "ours / tmpfs, 16 MiB in 4 KiB writes, open to close: $(ratio "${T[ours-write:16:4096]}" "${T[tmpfs-write:16:4096]}") (goal <= 1.5)"
say "goals: 6.12 / ours >= 300 for 16 MiB in 4 KiB writes; ours t(2N)/t(N) <= 2.2"
