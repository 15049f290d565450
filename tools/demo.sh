#!/usr/bin/env bash
# demo.sh - install what is missing, build, and run the main demo on virtual
# devices: the congestion-control loop of a RoCE fabric, shown twice.
#
# 1. Virtual time, 100 Gbps (rocelab-fabric, about a second): an 8:1 incast
#    with PFC alone (conf/scenarios/incast-8to1-pfc.yaml) and with ECN
#    marking below the XOFF point plus DCQCN (incast-8to1-dcqcn-loop.yaml),
#    20 ms each, plotted side by side (tools/plot_loop.py): PFC frames over
#    time, the queue against Kmin, Kmax and the XOFF point, each sender's
#    goodput against its fair share.
# 2. Real time, 1 Gbps, two processes joined by five memif links (no NICs,
#    no hugepages): rocelab-gen's hosts h0..h3 -> rocelab-switch
#    (conf/incast-4to1-ecn-1g.yaml) -> h4, a 4:1 incast of 1MiB RDMA WRITEs,
#    once with --dcqcn off and once with DCQCN on (conf/gen/dcqcn-4to1-1g.yaml,
#    its timers scaled to 1 Gbps), plotted the same way.
# Nothing is dropped in any run: PFC holds the class lossless; the question
# the demo answers is whether PFC or congestion control does the work.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
bash tools/build.sh >/dev/null
out=${ROCELAB_DEMO_DIR:-/tmp/rocelab-demo}
mkdir -p "$out"
have_plots=0
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null && have_plots=1

echo "== 1. virtual time, 100 Gbps: an 8:1 incast, PFC alone and with ECN + DCQCN (20 ms of fabric time each) =="
rm -rf "$out/vt-pfc" "$out/vt-dcqcn"
build/app/rocelab-fabric run conf/scenarios/incast-8to1-pfc.yaml --duration 20ms --out "$out/vt-pfc" --quiet \
    | grep -E "^rocelab-fabric: ran" || true
build/app/rocelab-fabric run conf/scenarios/incast-8to1-dcqcn-loop.yaml --out "$out/vt-dcqcn" --quiet \
    | grep -E "^rocelab-fabric: (ran|incast)" || true
if [[ $have_plots == 1 ]]; then
  /usr/bin/python3 tools/plot_loop.py --off "$out/vt-pfc" --on "$out/vt-dcqcn" --port leaf0:Ethernet8 --queue 3 \
      --out "$out/loop-100g.png" --json "$out/loop-100g.json"
fi
echo "   reports: $out/vt-pfc/index.html, $out/vt-dcqcn/index.html"

sock="$out/sock"
mkdir -p "$sock"
sw_vdev=(); gen_vdev=()
for i in 0 1 2 3 4; do
  sw_vdev+=("--vdev=net_memif$i,role=server,socket=$sock/m$i.sock")
  gen_vdev+=("--vdev=net_memif$i,role=client,socket=$sock/m$i.sock")
done

# One real-time run: the switch (worker on CPU 1), then the generator
# (worker on CPU 0) with the given DCQCN option; results in $out/rt-$1.
run_memif() {
  local tag=$1 d="$out/rt-$1"; shift
  rm -rf "$d"; mkdir -p "$d"; rm -f "$sock"/*.sock
  build/app/rocelab-switch --no-huge -m 1024 --no-pci -l 0-1 --file-prefix "rl-demo-sw-$tag-$$" \
      --log-level lib.eal:error "${sw_vdev[@]}" -- \
      --config conf/incast-4to1-ecn-1g.yaml --duration 9s --status-interval 2s \
      --report "$d/switch.json" --queue-csv "$d/queues.csv" > "$d/switch.log" 2>&1 &
  local sw_pid=$!
  trap 'kill "$sw_pid" 2>/dev/null || true' EXIT
  # Wait for the switch's start-up banner: its ports (memif servers) are up then.
  for _ in $(seq 300); do
    grep -q "^rocelab-switch .*ports" "$d/switch.log" 2>/dev/null && break
    kill -0 "$sw_pid" 2>/dev/null || { cat "$d/switch.log"; exit 1; }
    sleep 0.1
  done
  build/app/rocelab-gen --no-huge -m 1024 --no-pci --lcores '0@1,1@0' --file-prefix "rl-demo-gen-$tag-$$" \
      --log-level lib.eal:error "${gen_vdev[@]}" -- \
      --config conf/gen/dcqcn-4to1-1g.yaml "$@" --duration 5s --quiet \
      --report "$d/gen.json" --timeseries "$d/flows.csv" --timeseries-interval 50ms --fct-csv "$d/fct.csv" \
      --linger 30s > "$d/gen.log" 2>&1
  wait "$sw_pid" || true
  trap - EXIT
}

echo
echo "== 2. real time, 1 Gbps over memif: a 4:1 incast, 1MiB RDMA WRITEs, 5 s with DCQCN off, then 5 s with it on =="
run_memif off --dcqcn off
run_memif on
/usr/bin/python3 - "$out/rt-off" "$out/rt-on" <<'PY'
import json, sys
for d, label in ((sys.argv[1], "DCQCN off (PFC alone)"), (sys.argv[2], "DCQCN on")):
    g = json.load(open(d + "/gen.json")); s = json.load(open(d + "/switch.json"))
    print(f"\n-- {label} --")
    print(f"  {'flow':10} {'goodput':>10} {'over FCT':>10} {'messages':>9} {'FCT p50':>9} {'FCT p99':>9}"
          f" {'CNPs':>6} {'NAKs':>5} {'timeouts':>8}")
    for f in g["flows"]:
        print(f"  {f['name']:10} {f['goodput_bps'] / 1e6:7.1f}Mbps {f['goodput_fct_bps'] / 1e6:7.1f}Mbps "
              f"{f['messages_completed']:>9} {f['fct_p50_ns'] / 1e6:7.1f}ms {f['fct_p99_ns'] / 1e6:7.1f}ms "
              f"{f.get('cnp_rx', 0):>6} {f['naks_rx']:>5} {f['timeouts']:>8}")
    e = next(p for p in s["ports"] if p["name"] == "Ethernet4")
    q3 = next(q for q in e["queues"] if q["queue"] == 3)
    xoff = sum(p["pfc"]["xoff_sent"][3] for p in s["ports"])
    drops = sum(sum(v for k, v in p["drops"].items() if k != "rx_pfc_disabled_prio") for p in s["ports"])
    print(f"  switch: {xoff} XOFF sent on priority 3; Ethernet4 queue 3 peak {q3['max_depth_bytes'] / 1e3:.0f} KB,"
          f" {q3['ecn_marked']} CE marks; drops {drops} (lossless: expected 0)")
PY
if [[ $have_plots == 1 ]]; then
  echo
  /usr/bin/python3 tools/plot_loop.py --off "$out/rt-off" --on "$out/rt-on" --port Ethernet4 --queue 3 \
      --bin 100ms --first 1s --settle 1s --out "$out/loop-1g.png" --json "$out/loop-1g.json"
  /usr/bin/python3 tools/plot_gen.py --timeseries "$out/rt-on/flows.csv" --report "$out/rt-on/gen.json" \
      --fct "$out/rt-on/fct.csv" --out "$out/rt-on/flows.png" >/dev/null 2>&1 &&
    echo "plot: $out/rt-on/flows.png (DCQCN on: throughput per flow, FCT CDF over every message)"
fi
