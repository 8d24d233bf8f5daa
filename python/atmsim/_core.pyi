"""Type stub of ``atmsim._core``, the pyo3 binding of the Rust core
(crates/atmsim-py/src/lib.rs). The JSON formats are in docs/core-interface.md."""

from typing import Any

class Simulation:
    """A network built from the core JSON, advanced in slices from Python."""

    def __init__(self, core_json: str) -> None:
        """Build the network; ValueError when the JSON or the scenario it describes is
        invalid ("core scenario JSON: ..." / "core scenario: ...")."""

    def advance(self, until_ps: int, max_events: int | None = None) -> bool:
        """Run every event with time <= until_ps (picoseconds), without holding the GIL;
        with ``max_events``, return after about that many events. True when until_ps (or
        the run's end) is reached, False when the call must be repeated. RuntimeError
        once finished."""

    @property
    def now_ps(self) -> int:
        """Simulated time reached, ps. RuntimeError once finished."""

    @property
    def duration_ps(self) -> int:
        """Duration of the scenario, ps. RuntimeError once finished."""

    @property
    def events(self) -> int:
        """Events processed so far. RuntimeError once finished."""

    def set_external(self, flow: int) -> None:
        """Make flow ``flow``'s two ends real hosts, for an emulation (docs/emulation.md):
        its model sender never starts. ValueError unless before the first ``advance``, on a
        run without the fast paths, for an existing flow."""

    def set_external_tcp(self, flow: int, scale: int, mss: int) -> None:
        """The real hosts of flow ``flow`` negotiated window scale ``scale`` (0 to 14) for
        the receiver's windows and segments of ``mss`` bytes: the explicit-rate control
        reads and writes their ACKs' windows with these. ValueError otherwise."""

    def inject(
        self, flow: int, to_receiver: bool, ip_bytes: int, tag: int, wnd: int = 0, ack: int = 0
    ) -> None:
        """A real host of flow ``flow`` writes an IP datagram of ``ip_bytes`` bytes at
        ``now_ps``: towards the flow's receiver (its data path or VC) or its sender (its
        ACK path or VC). ``tag`` comes back from ``take_delivered``; ``wnd``: the window
        field of a TCP segment towards the sender, which the explicit-rate control of
        routers and ATM edges may lower (0 for any other datagram); ``ack``: such a
        segment's acknowledgement as bytes acknowledged since the connection began, by
        which an ack bucket paces it (0: unknown). ValueError for a flow that is not one
        of real hosts."""

    def take_delivered(self) -> list[tuple[int, int, bool, int]]:
        """The real hosts' datagrams delivered since the last call, in the order they
        arrived: (tag, arrival time in ps, to_receiver, window field: as injected, or
        lowered by the explicit-rate control on the way)."""

    def finish(self) -> tuple[str, dict[str, Any]]:
        """Close the run: (summary JSON, series). The series dict holds ``time_s``
        (little-endian f64), ``entity`` (little-endian u32), ``metric`` (u8) and
        ``value`` (little-endian f64) as bytes, one item per sample, and the names
        ``entity_names`` and ``metric_names`` (lists of str) the indices refer to;
        and ``captures``, the packet captures' pcap files (a dict of file name to
        bytes, empty without captures). The simulation cannot be advanced afterwards
        (RuntimeError)."""

def version() -> str:
    """Version of the core crate."""

def table_parquet(
    columns: list[tuple[str, str, list]],
    metadata: list[tuple[str, str]],
    created_by: str,
) -> bytes:
    """The bytes of a Parquet file of nullable columns, each (name, kind, values) with
    kind "bool", "int", "float" or "str" and values a list of those or None;
    ``metadata`` goes into the file's key-value metadata. ValueError for a value not
    of its column's kind or columns of different lengths."""

def series_parquet(
    time_s: bytes,
    entity: bytes,
    entity_names: list[str],
    metric: bytes,
    metric_names: list[str],
    value: bytes,
    created_by: str,
) -> bytes:
    """The bytes of a Parquet file of a series' columns as ``Simulation.finish``
    returns them: time_s, entity and metric (as strings), value. ValueError when the
    columns differ in length or an index has no name."""

def checksum_update(checksum: int, old: int, new: int) -> int:
    """The TCP checksum after one 16-bit header word changes from ``old`` to ``new``:
    the core's incremental update (RFC 1624, eqn. 3), as routers and ATM edges apply it
    when they rewrite an ACK's window. Arguments and result are 16-bit (0 .. 65535);
    OverflowError outside that range."""
