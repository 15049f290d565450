"""A small, independent reader of rocelab-fabric's captures (--pcap).

Nothing here comes from rocelab's code: the pcap record layout (nanosecond
magic a1b23c4d), Ethernet/IPv4/UDP, the IBTA BTH/AETH/RETH layouts and the
802.1Qbb MAC Control frame are read straight from the bytes, so tests can
recompute a run's figures from the wire and compare them with what the
runner reports.
"""
import struct

ROCE_PORT = 4791
WIRE_OVERHEAD = 24  # preamble + SFD + IFG (20 B) and FCS (4 B): on the wire, not in the capture

# IBTA RC opcodes (BTH byte 0) -> bytes of extended headers before the payload.
RC_EXT = {0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4,       # SEND first/middle/last/last+imm/only/only+imm
          0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4, 0x0A: 16, 0x0B: 20}    # RDMA WRITE first/middle/last/last+imm/only/only+imm
RC_LAST = {0x02, 0x03, 0x04, 0x05, 0x08, 0x09, 0x0A, 0x0B}            # the packet that ends a message
OP_ACK, OP_CNP = 0x11, 0x81


def read_pcap(path):
    """[(time_ns, original length, captured bytes)] of a nanosecond pcap."""
    with open(path, "rb") as f:
        b = f.read()
    magic = struct.unpack_from("<I", b, 0)[0]
    assert magic == 0xA1B23C4D, f"{path}: not a nanosecond pcap ({magic:#x})"
    off, out = 24, []
    while off < len(b):
        s, ns, incl, orig = struct.unpack_from("<IIII", b, off)
        off += 16
        out.append((s * 10**9 + ns, orig, b[off:off + incl]))
        off += incl
    return out


class Frame:
    """The fields of one captured frame that the tests use (untagged IPv4 RoCEv2,
    or MAC Control); `kind` is 'roce', 'mac_control' or 'other'."""
    __slots__ = ("t", "length", "kind", "src", "dst", "dscp", "ecn", "opcode", "dqp", "psn", "payload",
                 "syndrome", "mac_opcode")

    def __init__(self, t, length, d):
        self.t, self.length = t, length
        self.kind = "other"
        et = d[12:14] if len(d) >= 14 else b""
        if et == b"\x88\x08" and len(d) >= 16:
            self.kind = "mac_control"
            self.mac_opcode = struct.unpack_from(">H", d, 14)[0]
            return
        if et != b"\x08\x00" or len(d) < 34 or d[23] != 17:
            return
        ihl = (d[14] & 0x0F) * 4
        u = 14 + ihl
        if len(d) < u + 8 + 12 or struct.unpack_from(">H", d, u + 2)[0] != ROCE_PORT:
            return
        self.kind = "roce"
        self.dscp, self.ecn = d[15] >> 2, d[15] & 3
        self.src, self.dst = bytes(d[26:30]), bytes(d[30:34])
        udp_len = struct.unpack_from(">H", d, u + 4)[0]
        bth = u + 8
        self.opcode = d[bth]
        pad = (d[bth + 1] >> 4) & 3
        self.dqp = struct.unpack_from(">I", d, bth + 4)[0] & 0xFFFFFF
        self.psn = struct.unpack_from(">I", d, bth + 8)[0] & 0xFFFFFF
        self.payload = 0
        self.syndrome = None
        if self.opcode in RC_EXT:
            self.payload = udp_len - 8 - 12 - RC_EXT[self.opcode] - pad - 4
        elif self.opcode == OP_ACK and len(d) > bth + 12:
            self.syndrome = d[bth + 12]

    @property
    def is_data(self):
        return self.kind == "roce" and self.opcode in RC_EXT

    @property
    def is_nak(self):
        # AETH syndrome 011x_xxxx: NAK (IBTA 9.7.5.2.7)
        return self.kind == "roce" and self.opcode == OP_ACK and self.syndrome is not None and \
            (self.syndrome & 0x60) == 0x60


def frames(path):
    return [Frame(t, ln, d) for t, ln, d in read_pcap(path)]
