#!/usr/bin/env bash
# setup.sh - install what rocelab needs on Debian 12 (idempotent; run as root).
# Installs only missing packages; does nothing when everything is present.
set -euo pipefail
pkgs=(g++ meson ninja-build pkg-config libdpdk-dev dpdk dpdk-dev libpcap-dev libyaml-cpp-dev
      googletest libgtest-dev zlib1g-dev libbenchmark-dev tshark python3-scapy python3-matplotlib python3-yaml iproute2
      clang libclang-rt-14-dev   # tools/fuzz.sh: clang + libFuzzer/ASan runtimes (libclang_rt.fuzzer-x86_64.a)
      ethtool iputils-ping traceroute   # tests/dpdk/test_linux_hosts.py: offloads off, ping, traceroute through the leaf
      chromium fonts-liberation python3-pil   # tests/dpdk/test_report_render.py: index.html in headless Chromium
      openmpi-bin libopenmpi-dev)  # lib/sim/mpi_transport (-Dmpi=auto): the parallel engine over MPI ranks, tests sim_mpi_np*
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
