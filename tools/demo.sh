#!/usr/bin/env bash
# demo.sh - install what is missing, build, and run the main demo on virtual
# devices: a 4:1 RoCEv2 incast from rocelab-gen through rocelab-switch.
#
# Two processes joined by five memif links (no NICs, no hugepages):
#   rocelab-gen  hosts h0..h3 --1Gbps--> rocelab-switch (conf/incast-lossless-1g.yaml) --1Gbps--> h4
# Four RC queue pairs write 1MiB messages at line rate into one 1Gbps port.
# The switch's lossless PG 3 fills, it sends PFC XOFF upstream, the
# generator's hosts pause, and nothing is dropped: every flow gets its fair
# quarter of the egress. The generator prints per-flow goodput and FCT; the
# switch prints its queues and PFC counters; plots land in $out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh >/dev/null
out=${ROCELAB_DEMO_DIR:-/tmp/rocelab-demo}
mkdir -p "$out"
sock="$out/sock"
mkdir -p "$sock"
rm -f "$sock"/*.sock
sw_vdev=(); gen_vdev=()
for i in 0 1 2 3 4; do
  sw_vdev+=("--vdev=net_memif$i,role=server,socket=$sock/m$i.sock")
  gen_vdev+=("--vdev=net_memif$i,role=client,socket=$sock/m$i.sock")
done
echo "== rocelab-switch: 5 ports at 1Gbps, lossless PG 3 (conf/incast-lossless-1g.yaml) =="
# The switch's worker lcore runs on CPU 1, the generator's on CPU 0.
build/app/rocelab-switch --no-huge -m 1024 --no-pci -l 0-1 --file-prefix "rl-demo-sw-$$" \
    --log-level lib.eal:error "${sw_vdev[@]}" -- \
    --config conf/incast-lossless-1g.yaml --duration 12s --status-interval 2s \
    --report "$out/switch.json" --queue-csv "$out/queues.csv" > "$out/switch.log" 2>&1 &
sw_pid=$!
trap 'kill "$sw_pid" 2>/dev/null || true' EXIT
# Wait for the switch's start-up banner: its ports (memif servers) are up then.
for _ in $(seq 300); do
  grep -q "^rocelab-switch .*ports" "$out/switch.log" 2>/dev/null && break
  kill -0 "$sw_pid" 2>/dev/null || { cat "$out/switch.log"; exit 1; }
  sleep 0.1
done
echo "== rocelab-gen: 4:1 incast, 1MiB RDMA WRITEs at 1Gbps per sender, 5 seconds =="
build/app/rocelab-gen --no-huge -m 1024 --no-pci --lcores '0@1,1@0' --file-prefix "rl-demo-gen-$$" \
    --log-level lib.eal:error "${gen_vdev[@]}" -- \
    --pattern incast --senders 4 --rate 1Gbps --msg-size 1MiB --window 1024 --duration 5s \
    --report "$out/gen.json" --timeseries "$out/flows.csv" --fct-csv "$out/fct.csv" --status-interval 1s --linger 30s
wait "$sw_pid" || true
trap - EXIT
/usr/bin/python3 - "$out/gen.json" "$out/switch.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
print("\n== per flow (rocelab-gen report) ==")
print("  goodput over the run (the flow's start to the end) and over the flow's FCT (its first message's post")
print("  to its last message's completion); FCT p50/p99: per message, from post to completion")
print(f"  {'flow':10} {'goodput':>10} {'over FCT':>10} {'flow FCT':>9} {'messages':>9} {'FCT p50':>9} {'FCT p99':>9}"
      f" {'NAKs':>5} {'retx':>5} {'timeouts':>8}")
for f in g["flows"]:
    print(f"  {f['name']:10} {f['goodput_bps'] / 1e6:7.1f}Mbps {f['goodput_fct_bps'] / 1e6:7.1f}Mbps "
          f"{f['flow_fct_ns'] / 1e9:8.3f}s {f['messages_completed']:>9} "
          f"{f['fct_p50_ns'] / 1e6:7.1f}ms {f['fct_p99_ns'] / 1e6:7.1f}ms {f['naks_rx']:>5} "
          f"{f['retransmissions']:>5} {f['timeouts']:>8}")
e = next(p for p in s["ports"] if p["name"] == "Ethernet4")
q3 = next(q for q in e["queues"] if q["queue"] == 3)
print(f"\n== switch egress Ethernet4 (1Gbps) queue 3: {q3['deq_packets']} frames, peak depth {q3['max_depth_bytes']} B,"
      f" tail drops {q3['drop_packets']} ==")
print("\n== PFC: what the switch sent, what the hosts did ==")
for i, p in enumerate(g["ports"][:4]):
    sp = s["ports"][i]
    print(f"  {sp['name']}: switch sent {sp['pfc']['xoff_sent'][3]} XOFF / {sp['pfc']['xon_sent'][3]} XON on priority 3;"
          f" host h{i} paused {p['pause']['paused_ns'][3] / 1e6:.0f} ms")
drops = sum(sum(v for k, v in p["drops"].items() if k != "rx_pfc_disabled_prio") for p in s["ports"])
print(f"  switch drops: {drops}   (lossless: expected 0)")
PY
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  /usr/bin/python3 tools/plot_gen.py --timeseries "$out/flows.csv" --report "$out/gen.json" --fct "$out/fct.csv" \
      --out "$out/flows.png" >/dev/null 2>&1 &&
    echo "plot: $out/flows.png (throughput per flow, FCT CDF over every message)"
  /usr/bin/python3 tools/plot_queues.py "$out/queues.csv" --port Ethernet4 --out "$out/queues.png" \
      --title "rocelab-switch: Ethernet4 egress during the 4:1 incast" && echo "plot: $out/queues.png"
fi
