#!/usr/bin/python3
"""Writes a PFC deadlock scenario: N L3 switches in a ring, one host each,
every host sending to the host HOPS switches clockwise, every route
shortest-first clockwise (no routing loop), so the clockwise ring links form
a cyclic buffer dependency. --watchdog adds SONiC's PFC watchdog (drop).

  tools/gen_deadlock_scenario.py > conf/scenarios/pfc-deadlock-ring.yaml
  tools/gen_deadlock_scenario.py --watchdog > conf/scenarios/pfc-deadlock-ring-watchdog.yaml
"""
import argparse
import sys

HEADER = {
    False: """# {name}.yaml - a PFC deadlock: {n} L3 switches in a ring, one host each,
# every host sending to the host {hops} switches clockwise (written by
# tools/gen_deadlock_scenario.py; docs/scenarios.md, "PFC deadlock").
#
# Every route is loop-free (destinations up to {half} switches away go
# clockwise, the others anticlockwise), yet the clockwise ring links form a
# cyclic buffer dependency: each ring link carries two flows at line rate
# (the local host's and a transit one), its egress queue fills with frames
# held by the ingress priority group of the previous ring link, that PG
# pauses the previous switch, whose queue fills, and so on round the ring.
# Once every clockwise queue is paused and holds only transit frames, none
# can send again: the runner finds the cycle of paused queues that sent
# nothing for a sample interval and lists it (summary.json `deadlocks`).
#
# Measured (4 switches, 2 hops): found at 0.5 ms, every clockwise queue
# paused holding 1.76 MB; it holds to the end. Each flow completed one 1 MiB
# message. Nothing dropped: PFC keeps its promise, at this price.
#
# Expect: a deadlock is found and still holds at the end; nothing completes
# once it holds; no drop; no watchdog storm.
""",
    True: """# {name}.yaml - the PFC deadlock of pfc-deadlock-ring.yaml with SONiC's
# PFC watchdog on (action drop), written by tools/gen_deadlock_scenario.py.
#
# The ring deadlocks as without the watchdog; once a queue on the cycle has
# been paused for the detection time, the watchdog drops that queue's
# frames and ignores the pause: the cycle breaks, the runner sees the queues
# send again and records when the deadlock cleared, and the flows recover
# (go-back-N resends what the watchdog dropped). The drops are counted by
# name (drop_pfcwd in each port's report, the watchdog's storms per queue).
#
# Measured (4 switches, 2 hops): found at 0.5 ms, broken at 3 ms (the
# watchdog, polled every 1 ms, acts once a queue has been paused for 1 ms
# at two polls); restored 2 ms later, the flows resend at line rate and it
# forms again at 6.5 ms, broken at 9 ms: the watchdog breaks a deadlock, it
# does not remove the cyclic dependency. 3 messages per flow in 12 ms
# against 1 without the watchdog; 51825 frames dropped (drop_pfcwd) on s0's
# clockwise port, none on host ports.
#
# Expect: it is found, broken each time within 3 ms, and forms again;
# storms on the ring ports only; drops on the ring ports only; the flows
# complete more messages than without the watchdog.
""",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--switches", type=int, default=4)
    ap.add_argument("--hops", type=int, default=2, help="ring links each flow crosses (clockwise)")
    ap.add_argument("--watchdog", action="store_true", help="PFC watchdog with the drop action")
    ap.add_argument("--duration", default="")
    a = ap.parse_args()
    n, hops = a.switches, a.hops
    if n < 3 or not 1 <= hops <= n // 2:
        sys.exit("gen_deadlock_scenario: need at least 3 switches and 1 <= hops <= switches/2")
    name = "pfc-deadlock-ring-watchdog" if a.watchdog else "pfc-deadlock-ring"
    duration = a.duration or ("12ms" if a.watchdog else "3ms")
    out = [HEADER[a.watchdog].format(name=name, n=n, hops=hops, half=n // 2).rstrip("\n"), "#",
           f"#   rocelab-fabric run conf/scenarios/{name}.yaml --out out", f"name: {name}"]
    desc = (f"{n} switches in a ring, flows {hops} hops clockwise - a cyclic buffer dependency,"
            + (" that the PFC watchdog (drop) breaks" if a.watchdog else " that deadlocks PFC"))
    out += [f"description: {desc}", f"duration: {duration}", "link: {rate: 100Gbps, delay: 100ns}",
            "sample_interval: 20us", "switches:"]
    for i in range(n):
        nxt, prv = (i + 1) % n, (i - 1) % n
        out += [f"  - name: s{i}", "    config:",
                "      ROCELAB: {mode: l3, seed: 7}",
                f'      DEVICE_METADATA: {{localhost: {{mac: "02:00:00:00:aa:{i:02x}"}}}}',
                "      PORT:",
                f"        Ethernet0: {{speed: 100Gbps}}   # h{i}",
                f"        Ethernet1: {{speed: 100Gbps}}   # s{nxt} (clockwise)",
                f"        Ethernet2: {{speed: 100Gbps}}   # s{prv} (anticlockwise)",
                "      WRED_PROFILE: {}                # no ECN: PFC alone (DCQCN is off too)",
                '      PORT_QOS_MAP: {global: {pfc_enable: "3"}}',
                "      BUFFER_POOL: {ingress_lossless_pool: {size: 8MiB, type: ingress, mode: dynamic}}",
                "      BUFFER_PROFILE:",
                "        pg_lossless: {pool: ingress_lossless_pool, dynamic_th: -3, xoff: auto}",
                "        ingress_lossy_profile: {pool: ingress_lossless_pool, size: 0, dynamic_th: 3}",
                "      BUFFER_PG:",
                '        "global|3": {profile: pg_lossless}',
                '        "global|0": {profile: ingress_lossy_profile}']
        if a.watchdog:
            out += ["      PFC_WD:",
                    "        global: {detection_time: 1ms, restoration_time: 2ms, action: drop}",
                    "        GLOBAL: {POLL_INTERVAL: 1ms}"]
        # Ring link i -> i+1 is 10.0.i.0/31: s_i has .0, s_{i+1} has .1.
        out += ["      INTERFACE:",
                f'        "Ethernet0|10.{i + 1}.0.1/24": {{}}',
                f'        "Ethernet1|10.0.{i}.0/31": {{}}',
                f'        "Ethernet2|10.0.{prv}.1/31": {{}}',
                "      ROUTE:"]
        for d in range(1, n):
            j = (i + d) % n
            if d <= n // 2:
                out.append(f'        "10.{j + 1}.0.0/24": {{nexthop: "10.0.{i}.1", ifname: Ethernet1}}')
            else:
                out.append(f'        "10.{j + 1}.0.0/24": {{nexthop: "10.0.{prv}.0", ifname: Ethernet2}}')
        out += ["      NEIGH:",
                f'        "Ethernet0|10.{i + 1}.0.2": {{neigh: "02:00:00:00:{i:02x}:01", family: IPv4}}',
                f'        "Ethernet1|10.0.{i}.1": {{neigh: "02:00:00:00:aa:{nxt:02x}", family: IPv4}}',
                f'        "Ethernet2|10.0.{prv}.0": {{neigh: "02:00:00:00:aa:{prv:02x}", family: IPv4}}']
    out.append("hosts:")
    for i in range(n):
        out.append(f'  - {{name: h{i}, mac: "02:00:00:00:{i:02x}:01", ip: 10.{i + 1}.0.2, '
                   f'gateway: "02:00:00:00:aa:{i:02x}"}}')
    out.append("links:")
    for i in range(n):
        out.append(f"  - {{a: h{i}, b: s{i}:Ethernet0}}")
    for i in range(n):
        out.append(f"  - {{a: s{i}:Ethernet1, b: s{(i + 1) % n}:Ethernet2}}")
    out += ["traffic:", "  seed: 7", "  msg_size: 1MiB", "  pmtu: 1024", "  window: 8192", "  dcqcn: off"]
    if a.watchdog:
        out += ["  ack_timeout: 500us                # go-back-N resends what the watchdog dropped",
                "  retry_infinite: true"]
    out += [
            "  flows:"]
    for i in range(n):
        out.append(f"    - {{name: h{i}->h{(i + hops) % n}, src: h{i}, dst: h{(i + hops) % n}}}")
    out.append("expect:")
    if a.watchdog:
        out += ["  - deadlocks >= 2                 # it forms as without the watchdog, and again",
                "                                   # after each restoration (the cause remains)",
                "  - deadlock_max < 3ms             # broken each time: detection 1 ms, polled every 1 ms",
                "  - pfcwd_storms > 0",
                "  - pfcwd_storms(s0:Ethernet0) == 0   # host ports never see a storm",
                "  - drops(s0:Ethernet1) > 0        # what the watchdog dropped, on the ring",
                "  - drops(s0:Ethernet0) == 0"]
        out += [f"  - messages(h{i}->h{(i + hops) % n}) > 2          # 1 without the watchdog" for i in range(n)]
    else:
        out += ["  - deadlocks > 0                  # the cycle of paused queues is found",
                "  - deadlocked == 1                # and never breaks:",
                "  - deadlock_max >= 2ms            # found at 0.5 ms, it holds to the end",
                "  - drops == 0                     # lossless: nothing dropped, nothing moves",
                "  - pfcwd_storms == 0",
                f"  - messages(h0->h{hops % n}) < 2           # nothing completes once it holds"]
    print("\n".join(out))


if __name__ == "__main__":
    main()
