#!/bin/bash
# ACPI configfs: an SSDT compiled with iasl loads through the aml binary
# attribute and unloads on rmdir; bad blobs load nothing. fsync(2) is the
# call that reports what acpi_configfs made of a blob (blobput -f); close(2)
# returns 0, and a blob left to the release is loaded or refused silently.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/lib.sh"

T=$CONFIGFS/acpi/table
DEV=/sys/bus/acpi/devices/LKTS0045:00
DYN=/sys/firmware/acpi/tables/dynamic
work=$(mktemp -d)
cp "$(dirname "$0")/lk45_ssdt.asl" "$work/"
cd "$work" || exit 1

check "iasl compiles the SSDT" iasl -p lk45 lk45_ssdt.asl
# A second table with the same device: ACPICA reloads an identical table
# from the copy it kept at the first load, so a new copy would just be
# dropped; a table of its own shows the reload for real.
sed 's/"LK45TBL"/"LK45TB2"/' lk45_ssdt.asl >lk45b_ssdt.asl
check "iasl compiles its twin (table id LK45TB2)" iasl -p lk45b lk45b_ssdt.asl
configfs_up && modprobe acpi_configfs && ok "configfs and acpi_configfs load" ||
	not_ok "configfs and acpi_configfs load"
ndyn=$(ls $DYN 2>/dev/null | wc -l)
check "mkdir $T/lk45" mkdir $T/lk45

# acpi_configfs's complaints about table lengths in the kernel log
nlen() { dmesg | grep -c 'ACPI configfs: invalid table length'; }

# Bad blobs first, on the item that will load the good one.
n0=$(nlen)
is "$($BLOBPUT -f $T/lk45/aml -z)" "bytes=0 write=OK fsync=OK close=OK" \
	"zero-length write: write, fsync and close return 0 (6.12 dereferenced NULL at close)"
is "$(nlen)" "$n0" "and the write method was not called"
head -c 10 lk45.aml >short.aml
is "$($BLOBPUT -f $T/lk45/aml short.aml | cut -d' ' -f1-4)" \
	"bytes=10 write=OK fsync=EINVAL close=OK" \
	"10-byte blob, shorter than a table header: fsync fails with EINVAL, close returns 0"
is "$(nlen)" "$((n0 + 1))" "one refusal logged: the release did not commit it again"
is "$($BLOBPUT $T/lk45/aml short.aml | cut -d' ' -f1-3)" "bytes=10 write=OK close=OK" \
	"the same without fsync: close returns 0"
is "$(nlen)" "$((n0 + 2))" "the release committed it once, and the refusal reached nobody"
{ cat lk45.aml; printf x; } >long.aml
is "$($BLOBPUT -f $T/lk45/aml long.aml | cut -d' ' -f1-4)" \
	"bytes=72 write=OK fsync=EINVAL close=OK" \
	"a byte more than the header's length: fsync fails with EINVAL"
{ printf DSDT; tail -c +5 lk45.aml; } >dsdt.aml
is "$($BLOBPUT -f $T/lk45/aml dsdt.aml | cut -d' ' -f1-4)" \
	"bytes=71 write=OK fsync=EINVAL close=OK" \
	"a DSDT signature: fsync fails with EINVAL"
is "$(ls $DYN | wc -l)" "$ndyn" "no table was loaded by the bad blobs"
[ ! -e $DEV ] && ok "no device from the bad blobs" || not_ok "no device from the bad blobs"

is "$($BLOBPUT $T/lk45/aml lk45.aml 16 | cut -d' ' -f1-3)" "bytes=71 write=OK close=OK" \
	"the SSDT in 16-byte writes, no fsync: close returns 0 and the release loads it"
wait_for -e $DEV && ok "its device appears: $DEV" || not_ok "its device appears: $DEV"
is "$(cat $DEV/path 2>/dev/null)" '\_SB_.LK45' "at ACPI path \\_SB_.LK45"
is "$(cat $T/lk45/signature) $(cat $T/lk45/oem_table_id)" "SSDT LK45TBL" \
	"configfs shows the loaded table's header"
is "$(ls $DYN | wc -l)" "$((ndyn + 1))" "one more table under $DYN"
found=no
for f in "$DYN"/SSDT*; do cmp -s "$f" lk45.aml && found=yes; done
is "$found" yes "its bytes there are the compiled SSDT's"
is "$($BLOBPUT -f $T/lk45/aml lk45.aml | cut -d' ' -f1-4)" \
	"bytes=71 write=OK fsync=EBUSY close=OK" \
	"a second upload to a loaded item: fsync fails with EBUSY"

# The same SSDT from another item: ACPICA refuses it (AE_ALREADY_EXISTS),
# which must reach the writer as an error (6.12 returned the positive
# status, which the commit took for success).
mkdir $T/dup $T/dup2
is "$($BLOBPUT -f $T/dup/aml lk45.aml | cut -d' ' -f1-4)" \
	"bytes=71 write=OK fsync=EEXIST close=OK" \
	"the same SSDT from a second item: fsync fails with EEXIST"
is "$($BLOBPUT $T/dup2/aml lk45.aml | cut -d' ' -f1-3)" "bytes=71 write=OK close=OK" \
	"the same without fsync: close returns 0 (the refusal reaches nobody)"
is "$(ls $DYN | wc -l)" "$((ndyn + 1))" "the refused duplicates added no table"
mkdir $T/empty
check "rmdir the refused items and one that never loaded" rmdir $T/dup $T/dup2 $T/empty
sleep 1
[ -e $DEV ] && ok "the loaded table is still loaded: its device is there" ||
	not_ok "the loaded table is still loaded: its device is there"
is "$(ls $DYN | wc -l)" "$((ndyn + 1))" "and the table count is unchanged"

check "rmdir $T/lk45" rmdir $T/lk45
wait_for ! -e $DEV && ok "rmdir unloaded the table: the device is gone" ||
	not_ok "rmdir unloaded the table: the device is gone"

mkdir $T/again
is "$($BLOBPUT -f $T/again/aml lk45b.aml | cut -d' ' -f1-4)" \
	"bytes=71 write=OK fsync=OK close=OK" \
	"a table declaring the same device loads in a new item (so the first was unloaded)"
wait_for -e $DEV && ok "and its device is back" || not_ok "and its device is back"
check "rmdir again" rmdir $T/again
wait_for ! -e $DEV && ok "and gone again" || not_ok "and gone again"

# The first SSDT once more, from a new item: ACPICA reloads the copy it
# kept from the first load; the item's own copy must not leak.
mkdir $T/same
is "$($BLOBPUT -f $T/same/aml lk45.aml | cut -d' ' -f1-4)" "bytes=71 write=OK fsync=OK close=OK" \
	"the first SSDT again, from a new item: fsync and close return 0"
wait_for -e $DEV && ok "its device is back" || not_ok "its device is back"
cat $T/same/aml >same.out 2>same.err
cmp -s same.out lk45.aml && ok "the item reads back the table's bytes" ||
	{ not_ok "the item reads back the table's bytes"
	  diag "read: $(wc -c <same.out) bytes, $(cat same.err); $(od -An -tx1 same.out | head -2)"; }
check "rmdir same" rmdir $T/same
wait_for ! -e $DEV && ok "and it unloads" || not_ok "and it unloads"
# Two open files of one item committing at once: one loads, the other
# finds the table loaded.
mkdir $T/pair
$BLOBPUT -f $T/pair/aml lk45.aml 8 >pair1.out &
$BLOBPUT -f $T/pair/aml lk45.aml 8 >pair2.out &
wait
is "$(cut -d' ' -f3 pair1.out pair2.out | sort | tr '\n' ' ')" "fsync=EBUSY fsync=OK " \
	"two uploads to one item committing at once: one loads, the other gets EBUSY"
wait_for -e $DEV && ok "the device is there once" || not_ok "the device is there once"
check "rmdir pair" rmdir $T/pair
wait_for ! -e $DEV && ok "and the table unloads" || not_ok "and the table unloads"
KL=/sys/kernel/debug/kmemleak
if [ -w $KL ]; then
	sleep 6	# kmemleak reports only objects older than 5 s
	echo scan >$KL && echo scan >$KL
	is "$(grep -c acpi_table_aml_write $KL)" 0 \
		"kmemleak: no object allocated by acpi_table_aml_write() leaked"
else
	skip "kmemleak after the reload" "no kmemleak in this kernel"
fi
check "acpi_configfs unloads" modprobe -r acpi_configfs
cd / && rm -rf "$work"
done_testing
