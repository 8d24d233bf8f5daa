"""Quantity strings -> canonical units (ps, bit/s, cells/s, km)."""

from __future__ import annotations

import pytest

from atmsim.units import (
    bps_to_cps,
    parse_bit_rate_bps,
    parse_cell_rate_cps,
    parse_length_km,
    parse_size_bytes,
    parse_time_ps,
    propagation_delay_ps,
    sonet_payload_bps,
)


@pytest.mark.parametrize(
    ("text", "ps"),
    [
        ("30 s", 30 * 10**12),
        ("100 ms", 100 * 10**9),
        ("5 us", 5 * 10**6),
        ("5 µs", 5 * 10**6),  # micro sign
        ("5 μs", 5 * 10**6),  # Greek mu
        ("10 ns", 10_000),
        ("3 ps", 3),
        ("0 s", 0),
        ("1.5 ms", 1_500_000_000),
        ("0.1 s", 10**11),  # exact, no float rounding
        ("2e-3 s", 2 * 10**9),
        ("30s", 30 * 10**12),
    ],
)
def test_time(text: str, ps: int) -> None:
    assert parse_time_ps(text) == ps
    assert isinstance(parse_time_ps(text), int)


@pytest.mark.parametrize("text", ["fast", "30", "30 sec", "30 S", "s", "", "1 h", "1.2.3 s"])
def test_bad_time_says_what_is_allowed(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_time_ps(text)
    assert 'expected a time like "30 s" (units: ps, ns, us, ms, s)' in str(info.value)


def test_time_rejects_negative_fractional_ps_and_non_strings() -> None:
    with pytest.raises(ValueError, match="negative"):
        parse_time_ps("-5 ms")
    with pytest.raises(ValueError, match="whole number of picoseconds"):
        parse_time_ps("0.5 ps")
    with pytest.raises(ValueError, match="got 30"):
        parse_time_ps(30)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("155.52 Mbps", 155_520_000.0),
        ("10 kbps", 10_000.0),
        ("1 Gbps", 1e9),
        ("1 Tbps", 1e12),
        ("0.5 Tbps", 5e11),
        ("64000 bps", 64_000.0),
        ("366792 cells/s", 366_792 * 424.0),
    ],
)
def test_bit_rate(text: str, bps: float) -> None:
    assert parse_bit_rate_bps(text) == bps


def test_cell_rate_is_bit_rate_over_424() -> None:
    assert parse_cell_rate_cps("155.52 Mbps") == pytest.approx(366_792.45283, rel=1e-12)
    assert parse_cell_rate_cps("366792 cells/s") == 366_792.0
    assert parse_cell_rate_cps("424 bps") == 1.0
    assert bps_to_cps(424_000.0) == 1000.0


@pytest.mark.parametrize("text", ["fast", "10 mbps", "10 Mb/s", "10", "-1 Mbps"])
def test_bad_rate(text: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_bit_rate_bps(text)
    assert "(units: bps, kbps, Mbps, Gbps, Tbps, cells/s)" in str(info.value)


def test_length_and_propagation() -> None:
    assert parse_length_km("1000 km") == 1000.0
    assert parse_length_km("50 m") == 0.05
    assert propagation_delay_ps(parse_length_km("1000 km")) == 5 * 10**9  # 5 ms
    assert propagation_delay_ps(parse_length_km("50 m")) == 250_000  # 250 ns
    with pytest.raises(ValueError, match=r"units: m, km"):
        parse_length_km("3 miles")
    with pytest.raises(ValueError, match="negative"):
        parse_length_km("-1 km")


def test_sonet_payload() -> None:
    payload = sonet_payload_bps(parse_bit_rate_bps("155.52 Mbps"))
    assert payload == 149_760_000.0
    assert round(bps_to_cps(payload)) == 353_208
    assert sonet_payload_bps(1e9) == pytest.approx(1e9 * 149.76 / 155.52)


@pytest.mark.parametrize(
    ("value", "size"),
    [
        (512, 512),  # a plain integer is bytes
        ("512 B", 512),
        ("512 bytes", 512),
        ("64 KB", 65536),  # KB = 1024 bytes, as the papers count windows
        ("64 kB", 65536),
        ("64 KiB", 65536),
        ("1 MB", 1_048_576),
        ("1 MiB", 1_048_576),
        ("1.5 KB", 1536),
        ("1 GB", 2**30),
        ("0 B", 0),
    ],
)
def test_size(value: object, size: int) -> None:
    assert parse_size_bytes(value) == size  # type: ignore[arg-type]
    assert isinstance(parse_size_bytes(value), int)  # type: ignore[arg-type]


@pytest.mark.parametrize("value", ["64 parsecs", "64", "KB", "64 kb", "64 Kb", 1.5, True, "-1 KB"])
def test_bad_size_says_what_is_allowed(value: object) -> None:
    with pytest.raises(ValueError) as info:
        parse_size_bytes(value)  # type: ignore[arg-type]
    assert 'a size like "64 KB"' in str(info.value)


def test_size_must_be_whole_bytes() -> None:
    with pytest.raises(ValueError, match="whole number of bytes"):
        parse_size_bytes("0.3 KB")
    with pytest.raises(ValueError, match="negative"):
        parse_size_bytes(-1)
