#!/bin/bash

# One line per seed system: what its demo will show once it lands.
cat <<'TXT'
clsact qdisc (seed 007): not landed yet; will show our sch_clsact with one ingress and one egress filter, traffic both ways, per-direction counters
configfs binary attributes (seed 008): not landed yet; will show a 16 MiB blob upload, a rejected blob failing close(2), and an SSDT loaded through ACPI configfs
TXT
