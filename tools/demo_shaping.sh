#!/usr/bin/env bash
# demo_shaping.sh - install what is missing, build, and run rocelab-switch on virtual
# devices: a replayed RoCEv2 capture into a port shaped to 1Gbps, showing
# strict priority for CNPs, DWRR 5:2:1 between data classes, and counted drops.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh >/dev/null
out=${ROCELAB_DEMO_DIR:-/tmp/rocelab-demo}
mkdir -p "$out"
# 64 frames: DSCP 26, 0 and 8 (1 KB payload) in turn, and one CNP (DSCP 48).
dscps=$(python3 -c 'print(",".join(["26","0","8"]*21 + ["48"]))')
/usr/bin/python3 tools/mkpcap.py roce "$out/demo.pcap" --count 64 --qps 16 --dscp "$dscps" \
    --cnp-for-dscp48 --payload 1024 2>/dev/null
echo "== rocelab-switch: $out/demo.pcap replayed into Ethernet1 shaped to 1Gbps, 5 seconds =="
build/app/rocelab-switch --no-huge -m 1024 --no-pci -l 0-1 --file-prefix "rocelab-demo-$$" \
    --log-level lib.eal:error \
    --vdev="net_pcap0,rx_pcap=$out/demo.pcap,infinite_rx=1" --vdev=net_null1,no-rx=1 -- \
    --config conf/demo-prio-shaping.yaml --duration 5s \
    --report "$out/report.json" --queue-csv "$out/queues.csv"
/usr/bin/python3 tools/demo_summary.py "$out/report.json" Ethernet1
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  /usr/bin/python3 tools/plot_queues.py "$out/queues.csv" --port Ethernet1 --out "$out/queues.png" \
      --title "rocelab-switch demo: Ethernet1 (1Gbps) queue depths" && echo "plot: $out/queues.png"
fi
