#!/bin/bash
# configfs binary attributes (seed 008): a 16 MiB upload through the
# lk45_blobstore sample, a rejected blob failing fsync(2), and an SSDT
# loaded through ACPI configfs.
. /bench/tests/configfs/lib.sh
S=$CONFIGFS/lk45_blobstore/demo
T=$CONFIGFS/acpi/table/demo
say() { echo "configfs: $*"; }
ms() { echo "scale=1; ${1##*ns=} / 1000000" | bc; }

configfs_up && modprobe lk45_blobstore && mkdir $S || { say "cannot set up"; exit 1; }
out=$($BLOBPUT $S/blob -p $((16 << 20)) 4096)
say "16 MiB in 4 KiB writes to $S/blob: ${out% ns=*}, $(ms "$out") ms (debug kernel)"
out=$($BLOBPUT $S/blob -p $((16 << 20)) 131072)
say "16 MiB in 128 KiB writes: ${out% ns=*}, $(ms "$out") ms; 6.12's times: make configfs-bench"
say "stored: $(od -An -tu8 -N8 $S/digest | tr -d ' ') bytes, commits $(cat $S/commits)"

# An image with a wrong checksum: every write succeeds, fsync(2) says no.
head -c 4096 /dev/urandom >/tmp/payload
{ printf 'LK45'; printf '\x00\x10\x00\x00'; cat /tmp/payload; printf '\x00\x00\x00\x00'; } >/tmp/bad.img
out=$($BLOBPUT -f $S/image /tmp/bad.img)
say "bad image to $S/image: ${out% ns=*} (fsync(2) commits and reports the write method's error)"
say "stored after the rejected upload: $(od -An -tu8 -N8 $S/digest | tr -d ' ') bytes, commits $(cat $S/commits), rejects $(cat $S/rejects)"
rmdir $S && modprobe -r lk45_blobstore

cd /tmp && cp /bench/tests/configfs/lk45_ssdt.asl . && iasl -p lk45 lk45_ssdt.asl >/dev/null &&
	modprobe acpi_configfs && mkdir $T || { say "cannot set up ACPI configfs"; exit 1; }
out=$($BLOBPUT -f $T/aml lk45.aml)
DEV=/sys/bus/acpi/devices/LKTS0045:00
wait_for -e $DEV
say "SSDT ($(stat -c %s lk45.aml) bytes, iasl) to $T/aml: ${out% ns=*}; table $(cat $T/signature) $(cat $T/oem_table_id); device $(cat $DEV/path 2>/dev/null || echo MISSING)"
rmdir $T
wait_for ! -e $DEV && say "rmdir $T: table unloaded, device gone" || say "rmdir $T: device still present"
modprobe -r acpi_configfs
