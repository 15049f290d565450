#!/usr/bin/python3
"""telemetry.py - a minimal client for a DPDK process's telemetry socket.

  tools/telemetry.py PREFIX /rocelab/port,Ethernet0
  tools/telemetry.py PREFIX /ethdev/stats,1

Prints the JSON reply. Used by the benchmark harness and the tests; for
interactive use, dpdk-telemetry.py -f PREFIX does the same.
"""
import json
import os
import socket
import sys


def socket_path(prefix):
    base = "/var/run/dpdk" if os.geteuid() == 0 else os.environ.get("XDG_RUNTIME_DIR", "/tmp") + "/dpdk"
    return os.path.join(base, prefix, "dpdk_telemetry.v2")


class Telemetry:
    def __init__(self, prefix):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.sock.connect(socket_path(prefix))
        info = json.loads(self.sock.recv(4096).decode())
        self.max_len = info.get("max_output_len", 16384)

    def query(self, cmd):
        self.sock.send(cmd.encode())
        return json.loads(self.sock.recv(self.max_len).decode())

    def close(self):
        self.sock.close()


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    t = Telemetry(sys.argv[1])
    print(json.dumps(t.query(sys.argv[2]), indent=1))
    t.close()


if __name__ == "__main__":
    main()
