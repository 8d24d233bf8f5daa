"""The analytic results the truth suite (``atmsim.validation.truths``) checks the
simulator against. Pure functions of their parameters, computed here from the
published formulas and never from a run; each names its source.

Units: queueing results count time in service times (cell times) and load as the
utilisation rho; rates are in the unit they are given in.
"""

from __future__ import annotations

import math
from typing import Optional

# --- queueing -------------------------------------------------------------------------------


def md1_mean_wait(rho: float) -> float:
    """Mean waiting time in queue (not counting the service) of the M/D/1 queue, in
    service times: the Pollaczek-Khinchine mean-value formula with a deterministic
    service (second moment = the square of the mean), W_q = rho / (2 (1 - rho))
    (L. Kleinrock, "Queueing Systems, Volume 1: Theory", 1975, section 5.6; D. Gross
    and C. M. Harris, "Fundamentals of Queueing Theory", section 5.1)."""
    if not 0 <= rho < 1:
        raise ValueError(f"rho must be in [0, 1), got {rho}")
    return rho / (2.0 * (1.0 - rho))


def md1k_state_probabilities(rho: float, buffer: int) -> list[float]:
    """Time-average (and, by PASTA, arrival-seen) probabilities p_0 .. p_K of the
    number in system of the M/D/1/K queue with K = buffer + 1 places (one in service,
    ``buffer`` waiting), arrival rate rho per service time.

    The exact result for M/G/1/K by the embedded Markov chain at departures (Gross and
    Harris, "Fundamentals of Queueing Theory", section 5.1.9, "M/G/1/K"): a_k =
    P(k arrivals during one service) = e^-rho rho^k / k! for a deterministic
    service; the chain of the number left behind by a departure (0 .. K - 1) has
    P(0, j) = a_j and P(i, j) = a_(j - i + 1) for i >= 1, the last column taking the
    tail; its stationary law pi^d gives p_n = pi^d_n / (pi^d_0 + rho) for n < K and
    p_K = 1 - 1 / (pi^d_0 + rho)."""
    if buffer < 0:
        raise ValueError(f"buffer must be >= 0, got {buffer}")
    if rho <= 0:
        return [1.0] + [0.0] * (buffer + 1)
    places = buffer + 1  # K: the system holds the cell in service and `buffer` waiting
    a = [math.exp(-rho)]
    for k in range(1, places + 1):
        a.append(a[-1] * rho / k)

    # The departure chain's balance equations solved forward (Gross and Harris's
    # recursion): pi_{j+1} a_0 = pi_j - pi_0 a_j - sum_{i=1..j} pi_i a_(j-i+1), in
    # exact proportion to pi_0 = 1, then normalised. Stable for the small K here.
    pi = [1.0]
    for j in range(places - 1):
        rest = pi[j] - pi[0] * a[j] - sum(pi[i] * a[j - i + 1] for i in range(1, j + 1))
        pi.append(rest / a[0])
    total = sum(pi)
    pi = [x / total for x in pi]
    denominator = pi[0] + rho
    probabilities = [x / denominator for x in pi]
    probabilities.append(1.0 - 1.0 / denominator)
    return probabilities


def md1k_loss(rho: float, buffer: int) -> float:
    """Loss probability of the M/D/1/K queue with ``buffer`` waiting places (K = buffer
    + 1 in system): p_K of ``md1k_state_probabilities``, the probability that an
    arrival finds the system full (PASTA). With buffer = 0 it is Erlang's loss formula
    for one server, rho / (1 + rho), whatever the service distribution."""
    return md1k_state_probabilities(rho, buffer)[-1]


def karol_output_wait(n_inputs: int, p: float) -> float:
    """Mean waiting time, in slots, of a cell at an output of an output-queued N x N
    switch whose N inputs each carry a cell for this output with probability p / N in
    every slot, cells of one slot queued in random order: W = ((N - 1) / N) p / (2 (1 -
    p)) (M. J. Karol, M. G. Hluchyj and S. P. Morgan, "Input Versus Output Queueing on
    a Space-Division Packet Switch", IEEE Trans. Commun. 35(12), 1987, output
    queueing); N -> infinity gives the M/D/1 value p / (2 (1 - p))."""
    if n_inputs < 1 or not 0 <= p < 1:
        raise ValueError(f"need N >= 1 and 0 <= p < 1, got N={n_inputs}, p={p}")
    return (n_inputs - 1) / n_inputs * p / (2.0 * (1.0 - p))


# --- TCP over AAL5 and IP -------------------------------------------------------------------

CELL_PAYLOAD = 48
TCPIP_HEADER = 40
LLC_SNAP_AND_TRAILER = 16
ACK_CELLS = 2


def cells_per_segment(mss: int) -> int:
    """Cells of one TCP segment over AAL5 with LLC/SNAP (docs/model.md, "AAL5"):
    ceil((MSS + 40 TCP/IP + 8 LLC/SNAP + 8 trailer) / 48)."""
    return math.ceil((mss + TCPIP_HEADER + LLC_SNAP_AND_TRAILER) / CELL_PAYLOAD)


def aal5_goodput_ceiling(cell_rate: float, mss: int, nrm: Optional[int] = None) -> float:
    """The most TCP payload (bits/s) one connection can carry over an ATM link of
    ``cell_rate`` cells/s, its ACKs on their own VC on the reverse link.

    UBR (``nrm`` None): every cell of the link carries the data VC, each segment takes
    c = ``cells_per_segment`` cells, so the ceiling is cell_rate x 8 MSS / c.

    ABR (``nrm`` given): of every Nrm in-rate cells one is a forward RM cell (TM 4.0
    source rule 3), so a segment costs c Nrm / (Nrm - 1) cells of the data VC. The ACK
    VC's forward RM cells (one per Nrm - 1 of its cells, two cells per ACK, one ACK per
    segment) are turned around at the data sender and come back as backward RM cells
    over the data's forward link, through the sender's own port. With no switch
    algorithm the data VC's ACR is its PCR, the link's rate R, so that port is offered
    R + b cells/s (b the backward RM cells) and, a FIFO, carries each input in
    proportion: the data VC gets D = R^2 / (R + b) with b = 2 D / (Nrm c), the positive
    root of (2 / (Nrm c)) D^2 + R D - R^2 = 0. The goodput is D (Nrm - 1) / (Nrm c)
    segments of MSS. (Counting the backward RM cells at their full rate instead, R x c
    Nrm / (c Nrm + 2), is lower by about (2 / (Nrm c))^2: 3 x 10^-5 for MSS 512.)"""
    c = cells_per_segment(mss)
    if nrm is None:
        return cell_rate * 8.0 * mss / c
    k = ACK_CELLS / (nrm * c)
    data_vc = cell_rate * (math.sqrt(1.0 + 4.0 * k) - 1.0) / (2.0 * k)
    return data_vc * (nrm - 1) / (nrm * c) * 8.0 * mss


def ip_goodput_ceiling(bit_rate: float, mss: int) -> float:
    """The most TCP payload (bits/s) over an IP link of ``bit_rate``: MSS of every
    MSS + 40 bytes."""
    return bit_rate * mss / (mss + TCPIP_HEADER)


def atm_base_rtt(cell_time: float, delays: list[float], mss: int) -> float:
    """Round trip of a segment and its ACK over an ATM path of equal-rate hops with
    one-way propagation ``delays`` (the ACK path the same hops reversed), no queueing:
    cells are switched one by one, so a segment's last cell reaches the far end c cell
    times after its first left plus one cell time per later hop, and the ACK (2 cells)
    likewise: (c + 2 + 2 (h - 1)) cell times + 2 x the propagation."""
    hops = len(delays)
    c = cells_per_segment(mss)
    return (c + ACK_CELLS + 2 * (hops - 1)) * cell_time + 2.0 * sum(delays)


def ip_base_rtt(rates: list[float], delays: list[float], mss: int) -> float:
    """Round trip of a segment and its ACK over IP hops (store and forward): per hop
    its propagation and the transmission of the (MSS + 40)-byte packet, and the same
    hops back with the 40-byte ACK."""
    data = sum(d + (mss + TCPIP_HEADER) * 8.0 / r for r, d in zip(rates, delays))
    ack = sum(d + TCPIP_HEADER * 8.0 / r for r, d in zip(rates, delays))
    return data + ack


def reno_sawtooth_utilisation(pipe: float, buffer: float) -> float:
    """Utilisation of a bottleneck by one TCP Reno connection in congestion avoidance
    whose window grows by one segment per round trip from W_max / 2 to W_max = pipe +
    buffer and halves there (T. V. Lakshman and U. Madhow, "The performance of TCP/IP
    for networks with high bandwidth-delay products and random loss", IEEE/ACM Trans.
    Networking 5(3), 1997, the deterministic periodic model): while the window W is
    below the pipe P the link carries W per base round trip; above it the link is full
    and the round trip grows with the queue. With beta = B / P: utilisation 1 when
    beta >= 1, else (3/4) (1 + beta)^2 / (1 + beta + beta^2)."""
    w_max = pipe + buffer
    w_0 = w_max / 2.0
    if w_0 >= pipe:
        return 1.0
    # Packets sent over one cycle and the cycle's length in units of 1 / mu.
    sent = (w_max**2 - w_0**2) / 2.0
    below = (pipe - w_0) * pipe  # (P - W_0) round trips of P / mu each
    above = (w_max**2 - pipe**2) / 2.0  # a round trip of W / mu per unit of growth
    return sent / (below + above)


def usable_window(window: float, mss: int, scale: int, receiver_window: int) -> int:
    """The window (bytes) a sender can use when a router writes min(receiver window,
    ``window``) into its ACKs, at least one segment (Explicit rate control of TCP (Satyavolu et al.,
    1998), docs/model.md, "Explicit-rate control of TCP"): the 16-bit field holds the window in
    units of 2^scale (RFC 1323), so what is written is rounded down to that unit, yet never
    below one segment; and the sender sends only whole segments."""
    written = min(int(window), receiver_window)
    field = written >> scale
    one_segment = -(-mss // (1 << scale))  # the least field that still holds one MSS
    field = max(field, one_segment)
    advertised = min(field, 65535) << scale
    return max(1, advertised // mss) * mss


# --- the Internet checksum -------------------------------------------------------------------


def internet_checksum(words: list[int]) -> int:
    """The Internet checksum of 16-bit ``words``: the one's complement of their one's
    complement sum (R. Braden, D. Borman, C. Partridge, "Computing the Internet
    Checksum", RFC 1071, section 4.1's loop: add, fold the carries, complement)."""
    total = 0
    for word in words:
        total += word
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


# --- fairness -------------------------------------------------------------------------------


def least_jain_in_band(ratio: float) -> float:
    """The least Jain index (sum x)^2 / (n sum x^2) of values that all lie within a band
    [x, ratio x]: 4 ratio / (1 + ratio)^2 (the Kantorovich inequality; reached with a
    share ratio / (1 + ratio) of the values at the low end and the rest at the high).
    ERICA's overload band delta makes every allocation whose load factor z lies in
    [1, 1 + delta] a fixed point, so its rates may sit anywhere in such a band of ratio
    1 + delta."""
    if ratio < 1:
        raise ValueError(f"ratio must be >= 1, got {ratio}")
    return 4.0 * ratio / (1.0 + ratio) ** 2
