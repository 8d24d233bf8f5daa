"""``[links.<name>]``: a unidirectional link and its output port."""

# No `from __future__ import annotations`: pydantic would then parse and evaluate
# every field's annotation string when the classes are built (see base.py).

from typing import Any, Literal, Optional

from pydantic import Field, field_validator, model_validator

from ...errors import show_value
from ...units import (
    MAX_SIZE_BYTES,
    bps_to_cps,
    parse_bit_rate_bps,
    parse_cell_rate_cps,
    parse_length_km,
    parse_size_bytes,
    parse_time_ps,
    propagation_delay_ps,
    sonet_payload_bps,
)
from ..common import _fail
from ..limits import (
    MAX_ATM_BUFFER_CELLS,
    MAX_IP_BUFFER_PACKETS,
    MAX_LINK_DELAY,
    MAX_LINK_KM,
    check_link_rate,
    int_range_text,
)
from ..quantities import (
    Buffer,
    Length,
    Rate,
)
from .base import Count, LinkDelay, Table, share_of
from .ports import (
    ALGORITHM_KINDS,
    ATM_POLICIES,
    DFBA_HIGH_FRACTION,
    DFBA_LOW_FRACTION,
    INTELLIGENT_TAIL_MARGIN_CELLS,
    IP_POLICIES,
    POLICY_KINDS,
    RED_MAX_P,
    RED_MAX_TH_FACTOR,
    RED_W_Q,
    SHARE_POLICIES,
    SHARE_THRESHOLD_FRACTION,
    AckControl,
    Algorithm,
    Policy,
    RateControl,
    red_threshold,
)


class Link(Table):
    """``[links.<name>]``: a unidirectional link fed by the output port at ``from``.

    ``layer = "atm"`` (default) carries cells; ``layer = "ip"`` carries whole
    packets at ``rate`` through a router queue. ``duplex = true`` also
    creates the reverse link ``<name>-rev`` with the same parameters.
    """

    from_: str = Field(alias="from")
    to: str
    rate: Rate
    """Line rate; cells/s = bits/s / 424 (of the SONET payload when ``sonet``)."""
    length: Optional[Length] = None
    """Propagation delay 5 us/km, at most 2e8 km. Give ``length`` or ``delay``, not both."""
    delay: Optional[LinkDelay] = None
    """Propagation delay; "0 s" when neither length nor delay is given."""
    layer: Literal["atm", "ip"] = "atm"
    """"atm": a cell link and switch port; "ip": a packet link and router port."""
    sonet: Optional[bool] = None
    """ATM only: carry cells in the STS-3c payload (149.76 of 155.52 Mbps); default false."""
    buffer: Buffer = "inf"
    """Waiting at the output port (not counting the one in transmission): cells on an
    ATM link; packets (a number) or bytes (a size such as "64 KB") on an IP link."""
    policy: Policy = Field(default_factory=lambda: Policy(kind="tail"))
    duplex: bool = False
    """Also create the reverse link ``<name>-rev`` with the same parameters."""
    algorithm: Optional[Algorithm] = None
    """ATM only: the ABR switch algorithm of the output port; none by default."""
    rate_control: Optional[RateControl] = None
    """The port computes explicit rates for the TCP flows through it: per flow in IP
    bytes/s at an IP port, per VC in cell payload bytes/s at an ATM port."""
    ack_control: Optional[AckControl] = None
    """What is done to the ACKs arriving over this link: on an IP link, by the router at
    its far end (their windows, an ack bucket), from the rates of another of its ports;
    on an ATM link, by the edge that reassembles the ACK frames of the ACK VCs ending
    with it (their windows), from the rates of an ATM port on the flows' data VCs."""
    count: Optional[Count] = None
    """Copies of a template (a name with {i}), 1 to 100000."""

    @field_validator("rate_control", mode="before")
    @classmethod
    def _rate_control_kind(cls, value: Any) -> Any:
        if value == "erica_plus":
            return {}
        if value is None or isinstance(value, dict):
            return value
        raise ValueError(
            'expected "erica_plus" (Explicit rate control of TCP\'s values) or a table like '
            f'{{ interval = "5 ms", t0 = "1.5 ms" }}, got {show_value(value)}'
        )

    @field_validator("algorithm", mode="before")
    @classmethod
    def _algorithm_kind(cls, value: Any) -> Any:
        if value is None or value == "none":
            return None
        if isinstance(value, dict):
            return value
        if isinstance(value, str) and value in ALGORITHM_KINDS:
            return {"kind": value}
        raise ValueError(
            'expected "erica", "erica_plus", "efci", "fmmra", "none" or a table like '
            f'{{ kind = "efci", high = 300 }}, got {show_value(value)}'
        )

    @field_validator("policy", mode="before")
    @classmethod
    def _policy_kind(cls, value: Any) -> Any:
        if isinstance(value, dict):
            return value
        if isinstance(value, str) and value in POLICY_KINDS:
            return {"kind": value}
        raise ValueError(
            'expected "tail", "ppd", "epd", "intelligent_tail", "selective_drop", "fba", '
            '"dfba" (ATM), "tail" (IP) or a table like { kind = "epd", threshold = 800 } or '
            f'{{ kind = "red", min_th = 5 }}, got {show_value(value)}'
        )

    @model_validator(mode="after")
    def _resolve(self) -> "Link":
        if self.length is not None and self.delay is not None:
            raise _fail("delay", "give length or delay, not both")
        if self.length is None and self.delay is None:
            self.delay = "0 s"
        problem = check_link_rate(self.rate)
        if problem is not None:
            raise _fail("rate", problem)
        if self.length is not None and parse_length_km(self.length) > MAX_LINK_KM:
            raise _fail(
                "length",
                f"must be at most 200000000 km (a delay of {MAX_LINK_DELAY} at 5 us/km), "
                f"got {show_value(self.length)}",
            )
        if self.layer == "atm":
            if self.ack_control is not None and self.ack_control.ack_bucket:
                raise _fail(
                    "ack_control.ack_bucket",
                    "the ack bucket is modelled at IP routers only: remove it, or use an IP "
                    "network",
                )
            self._resolve_atm()
        else:
            self._resolve_ip()
        return self

    def _resolve_atm(self) -> None:
        if self.sonet is None:
            self.sonet = False
        buffer = self.buffer
        if buffer != "inf" and not (type(buffer) is int and 1 <= buffer <= MAX_ATM_BUFFER_CELLS):
            raise _fail(
                "buffer",
                f"expected {int_range_text(1, MAX_ATM_BUFFER_CELLS)} of cells or "
                f'"inf" (ATM buffers count cells), got {show_value(buffer)}',
            )
        policy = self.policy
        if policy.kind not in ATM_POLICIES:
            raise _fail(
                "policy",
                f'{policy.kind} is for IP links (layer = "ip"); ATM links allow '
                '"tail", "ppd", "epd", "intelligent_tail", "selective_drop", "fba", "dfba"',
            )
        buffer = None if buffer == "inf" else buffer
        for key, least in (("threshold", 1), ("low", 0), ("high", 1)):
            value = getattr(policy, key)
            if isinstance(value, str):
                if buffer is None:
                    raise _fail(
                        f"policy.{key}",
                        f'{show_value(value)} is a share of the buffer, but buffer = "inf": '
                        "give a number of cells",
                    )
                setattr(policy, key, max(least, int(buffer * share_of(value))))
        if policy.kind in SHARE_POLICIES:
            self._resolve_share(policy, buffer)
            return
        if policy.kind == "dfba":
            self._resolve_dfba(policy, buffer)
            return
        if policy.kind in ("epd", "intelligent_tail"):
            if policy.threshold is None:
                if buffer is None:
                    raise _fail(
                        "policy.threshold",
                        f'required for {policy.kind} when buffer = "inf" '
                        "(the default is derived from the buffer size)",
                    )
                if policy.kind == "epd":
                    policy.threshold = max(1, buffer * 4 // 5)
                elif buffer > INTELLIGENT_TAIL_MARGIN_CELLS:
                    policy.threshold = buffer - INTELLIGENT_TAIL_MARGIN_CELLS
                else:
                    raise _fail(
                        "policy.threshold",
                        f"the default (buffer - 12) needs buffer > 12, got buffer = {buffer}; "
                        "set threshold",
                    )
            elif buffer is not None and policy.threshold > buffer:
                raise _fail(
                    "policy.threshold",
                    f"must be from 1 to the buffer ({buffer}), got {policy.threshold}",
                )

    def _resolve_share(self, policy: Policy, buffer: Optional[int]) -> None:
        """Selective Drop and FBA: R defaults to half the buffer, and is at most it."""
        if policy.threshold is None:
            if buffer is None:
                raise _fail(
                    "policy.threshold",
                    f'required for {policy.kind} when buffer = "inf" (R, cells; the default '
                    "is half the buffer)",
                )
            policy.threshold = max(1, int(buffer * SHARE_THRESHOLD_FRACTION))
        elif buffer is not None and policy.threshold > buffer:
            raise _fail(
                "policy.threshold",
                f"must be from 1 to the buffer ({buffer}), got {policy.threshold}",
            )

    def _resolve_dfba(self, policy: Policy, buffer: Optional[int]) -> None:
        """DFBA: L and H default to 50 % and 90 % of the buffer; L <= H <= buffer."""
        for key, fraction in (("low", DFBA_LOW_FRACTION), ("high", DFBA_HIGH_FRACTION)):
            if getattr(policy, key) is None:
                if buffer is None:
                    raise _fail(
                        f"policy.{key}",
                        f'required for dfba when buffer = "inf" (cells; the default is '
                        f"{fraction:.0%} of the buffer)",
                    )
                setattr(policy, key, max(1, int(buffer * fraction)))
        if buffer is not None and policy.high > buffer:
            raise _fail(
                "policy.high",
                f"must be from low ({policy.low}) to the buffer ({buffer}), got {policy.high}",
            )
        if policy.low > policy.high:
            raise _fail("policy.low", f"must be at most high ({policy.high}), got {policy.low}")

    def _resolve_ip(self) -> None:
        if self.algorithm is not None:
            raise _fail(
                "algorithm",
                "ABR switch algorithms run at ATM ports; an IP link has none: remove it "
                'or set layer = "atm"',
            )
        if self.sonet:
            raise _fail(
                "sonet",
                "sonet is for ATM links (cells in the STS-3c payload); "
                'an IP link sends packets at its rate: remove it or set layer = "atm"',
            )
        self.sonet = None
        buffer = self.buffer
        problem = (
            f"expected {int_range_text(1, MAX_IP_BUFFER_PACKETS)} of packets, a size in "
            f'bytes like "64 KB" (1 byte to 2^53), or "inf", got {show_value(buffer)}'
        )
        if isinstance(buffer, str) and buffer != "inf":
            try:
                size = parse_size_bytes(buffer)
            except ValueError:
                raise _fail("buffer", problem) from None
            if size < 1:
                raise _fail("buffer", f"must be at least 1 byte, got {show_value(buffer)}")
        elif buffer != "inf" and not 1 <= buffer <= MAX_IP_BUFFER_PACKETS:
            raise _fail("buffer", problem)
        policy = self.policy
        if policy.kind not in IP_POLICIES:
            raise _fail(
                "policy",
                f'{policy.kind} is a cell policy, for ATM links; IP links allow "tail" or '
                '{ kind = "red", min_th = ... }',
            )
        if policy.kind == "red":
            self._resolve_red(policy)

    def _resolve_red(self, policy: Policy) -> None:
        in_bytes = self.buffer_bytes() is not None
        if policy.min_th is None:
            unit = "bytes" if in_bytes else "packets"
            raise _fail("policy.min_th", f"required for red (average queue, in {unit})")
        for key in ("min_th", "max_th"):
            value = getattr(policy, key)
            if isinstance(value, str) and not in_bytes:
                raise _fail(
                    f"policy.{key}",
                    f"the buffer counts packets ({show_value(self.buffer)}), so thresholds are "
                    f'numbers of packets; got {show_value(value)} (a size needs buffer = "64 KB")',
                )
        if policy.max_th is None:
            if isinstance(policy.min_th, str):
                policy.max_th = RED_MAX_TH_FACTOR * parse_size_bytes(policy.min_th)
            else:
                policy.max_th = RED_MAX_TH_FACTOR * policy.min_th
        if red_threshold(policy.max_th) > MAX_SIZE_BYTES:
            raise _fail(
                "policy.max_th",
                "must be at most 2^53 (the default is 3 x min_th), "
                f"got {show_value(policy.max_th)}",
            )
        if red_threshold(policy.min_th) >= red_threshold(policy.max_th):
            raise _fail(
                "policy.max_th",
                f"must be above min_th ({show_value(policy.min_th)}), got "
                f"{show_value(policy.max_th)}",
            )
        if policy.w_q is None:
            policy.w_q = RED_W_Q
        if policy.max_p is None:
            policy.max_p = RED_MAX_P

    def bit_rate_bps(self) -> float:
        """Line rate in bit/s, as written (before the SONET overhead)."""
        return parse_bit_rate_bps(self.rate)

    def cell_rate_cps(self) -> float:
        """Cells/s the link carries: rate / 424, or the SONET payload rate / 424; 0 on IP."""
        if self.layer == "ip":
            return 0.0
        if self.sonet:
            return bps_to_cps(sonet_payload_bps(parse_bit_rate_bps(self.rate)))
        return parse_cell_rate_cps(self.rate)

    def delay_ps(self) -> int:
        """Propagation delay in ps (5 us/km when given as a length)."""
        if self.length is not None:
            return propagation_delay_ps(parse_length_km(self.length))
        return parse_time_ps(self.delay or "0 s")

    def buffer_cells(self) -> Optional[int]:
        """ATM: the buffer in cells (None = unlimited)."""
        if self.layer != "atm" or self.buffer == "inf":
            return None
        return int(self.buffer)

    def buffer_packets(self) -> Optional[int]:
        """IP: the buffer in packets, if it is given as a number."""
        if self.layer == "ip" and type(self.buffer) is int:
            return self.buffer
        return None

    def buffer_bytes(self) -> Optional[int]:
        """IP: the buffer in bytes, if it is given as a size."""
        if self.layer == "ip" and isinstance(self.buffer, str) and self.buffer != "inf":
            return parse_size_bytes(self.buffer)
        return None
