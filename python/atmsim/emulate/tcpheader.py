"""Reading and rewriting the TCP header of a real IPv4 datagram.

What the emulation needs of a real segment to let the simulated network's
explicit-rate control (Explicit rate control of TCP, Satyavolu et al., 1998) act on
it: whether it is a SYN, its window field, the window scale and MSS options of the
SYNs (RFC 7323, "TCP Extensions for High Performance", section 2; RFC 9293, "Transmission
Control Protocol", section 3.7.1), and a way to lower the window field with the
checksum updated incrementally (RFC 1624, "Computation of the Internet Checksum via
Incremental Update", eqn. 3), as a router does: the core's update
(``atmsim._core.checksum_update``), the one its simulated routers use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

TCP = 6
SYN = 0x02
ACK = 0x10
OPTION_END, OPTION_NOP, OPTION_MSS, OPTION_WSCALE = 0, 1, 2, 3


@dataclass(frozen=True)
class Segment:
    """What the emulation reads of a TCP segment in an IPv4 datagram."""

    tcp_at: int
    """Offset of the TCP header in the datagram."""
    flags: int
    window: int
    """The 16-bit window field."""
    mss: Optional[int]
    """The MSS option (SYNs), if present."""
    wscale: Optional[int]
    """The window scale option's shift (SYNs), if present."""
    seq: int = 0
    """The sequence number field."""
    ack: int = 0
    """The acknowledgement number field."""

    @property
    def syn(self) -> bool:
        return bool(self.flags & SYN)


def parse(datagram: bytes) -> Optional[Segment]:
    """The TCP segment of an IPv4 datagram, or None (not IPv4, not TCP, a fragment
    after the first, or too short)."""
    if len(datagram) < 20 or datagram[0] >> 4 != 4 or datagram[9] != TCP:
        return None
    if (int.from_bytes(datagram[6:8], "big") & 0x1FFF) != 0:
        return None  # a later fragment: no TCP header
    at = (datagram[0] & 0x0F) * 4
    if len(datagram) < at + 20:
        return None
    flags = datagram[at + 13]
    window = int.from_bytes(datagram[at + 14 : at + 16], "big")
    mss = wscale = None
    if flags & SYN:
        end = min(len(datagram), at + (datagram[at + 12] >> 4) * 4)
        k = at + 20
        while k < end:
            kind = datagram[k]
            if kind == OPTION_END:
                break
            if kind == OPTION_NOP:
                k += 1
                continue
            if k + 1 >= end or datagram[k + 1] < 2:
                break  # a malformed option ends the list
            length = datagram[k + 1]
            if kind == OPTION_MSS and length == 4:
                mss = int.from_bytes(datagram[k + 2 : k + 4], "big")
            elif kind == OPTION_WSCALE and length == 3:
                # RFC 7323 section 2.3: a shift above 14 is taken as 14.
                wscale = min(datagram[k + 2], 14)
            k += length
    seq = int.from_bytes(datagram[at + 4 : at + 8], "big")
    ack = int.from_bytes(datagram[at + 8 : at + 12], "big")
    return Segment(at, flags, window, mss, wscale, seq, ack)


def rewrite_window(
    datagram: bytes, segment: Segment, window: int, update: Callable[[int, int, int], int]
) -> bytes:
    """``datagram`` with its TCP window field set to ``window`` and its checksum
    updated incrementally by ``update(checksum, old, new)`` (RFC 1624)."""
    at = segment.tcp_at
    out = bytearray(datagram)
    old_sum = int.from_bytes(out[at + 16 : at + 18], "big")
    out[at + 14 : at + 16] = window.to_bytes(2, "big")
    out[at + 16 : at + 18] = update(old_sum, segment.window, window).to_bytes(2, "big")
    return bytes(out)


@dataclass
class Handshake:
    """What a real flow's SYNs negotiated: the window scale of the receiver's windows
    (its SYN-ACK's shift, when both SYNs carried the option; RFC 7323 section 2.2) and
    the segment size (the smaller MSS; 536 when a SYN carried none, RFC 9293)."""

    sender_wscale: Optional[int] = None
    sender_mss: Optional[int] = None
    seen_syn: bool = False
    scale: Optional[int] = None
    """Set once the receiver's SYN-ACK has been seen."""
    mss: int = 536
    sender_isn: Optional[int] = None
    """The sender's initial sequence number (its SYN's)."""
    acked: int = 0
    """The highest acknowledgement of the receiver so far, in bytes of data since the
    sender's SYN, unwrapped from the 32-bit field."""

    def from_sender(self, segment: Segment) -> None:
        if segment.syn and not segment.flags & ACK:
            self.seen_syn = True
            self.sender_wscale, self.sender_mss = segment.wscale, segment.mss
            self.sender_isn = segment.seq

    def acknowledged(self, segment: Segment) -> int:
        """The bytes of data the receiver's ``segment`` acknowledges since the
        connection began (its acknowledgement less the sender's ISN and SYN, unwrapped
        from 32 bits around the highest so far: RFC 9293's sequence space wraps); 0
        before the sender's SYN was seen or without the ACK flag."""
        if self.sender_isn is None or not segment.flags & ACK:
            return 0
        low = (segment.ack - self.sender_isn - 1) % (1 << 32)
        step = (low - self.acked) % (1 << 32)
        if step >= 1 << 31:  # an older acknowledgement than the highest: behind it
            return max(0, self.acked - ((1 << 32) - step))
        self.acked += step
        return self.acked

    def from_receiver(self, segment: Segment) -> bool:
        """Reads the receiver's SYN-ACK; True when it settles the scale."""
        if not (segment.syn and segment.flags & ACK and self.seen_syn):
            return False
        both = self.sender_wscale is not None and segment.wscale is not None
        self.scale = segment.wscale if both else 0
        self.mss = min(self.sender_mss or 536, segment.mss or 536)
        return True
