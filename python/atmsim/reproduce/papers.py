"""The five reproduced documents by name: citation, short title and readable id.

The code and the docs cite a document by its short citation, short title, first
author and year ("TCP over ABR (Kalyanaraman et al., 1996)"), then by its short
title alone; docs/model.md lists the five.

Each document has a readable id (``tcp-over-abr``, ...) and keeps its old id
(``seed000`` .. ``seed004``) as an alias. An experiment's readable id is its
document's readable id followed by the rest of its id: ``seed000-sec8`` is also
``tcp-over-abr-sec8``. ``atmsim reproduce`` accepts both; its output folders keep
the ``seedNNN-...`` names, which docs/reproduction.md and the scripts refer to.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Paper:
    """One reproduced document."""

    seed: str
    """The old id, ``seed000`` .. ``seed004`` (an alias)."""
    id: str
    """The readable id."""
    authors: str
    title: str
    short_title: str
    """The short title the code and the docs cite the document by ("TCP over ABR")."""
    venue: str
    """The venue, or the ATM Forum contribution number."""
    year: int
    month: str
    """The month, when the document gives one ("" otherwise)."""
    topic: str
    """What is reproduced, in a few words."""

    @property
    def citation(self) -> str:
        """Authors, "Title", venue, year."""
        when = f"{self.month} {self.year}" if self.month else str(self.year)
        return f'{self.authors}, "{self.title}", {self.venue}, {when}'

    @property
    def short(self) -> str:
        """First author et al. (year)."""
        first = self.authors.split(",")[0].strip()
        others = " et al." if "," in self.authors else ""
        return f"{first}{others} ({self.year})"

    @property
    def short_citation(self) -> str:
        """Short title, first author et al., year: how the code and the docs cite the
        document ("TCP over ABR (Kalyanaraman et al., 1996)"; docs/model.md lists them)."""
        first = self.authors.split(",")[0].strip().split()[-1]
        others = " et al." if "," in self.authors else ""
        return f"{self.short_title} ({first}{others}, {self.year})"


PAPERS = (
    Paper(
        seed="seed000",
        id="tcp-over-abr",
        authors="S. Kalyanaraman, R. Jain, S. Fahmy, R. Goyal, F. Lu, S. Srinidhi",
        title="Performance of TCP/IP over ABR Service on ATM Networks",
        short_title="TCP over ABR",
        venue="Proc. IEEE GLOBECOM '96",
        year=1996,
        month="",
        topic="TCP over ABR with ERICA, n sources + VBR",
    ),
    Paper(
        seed="seed001",
        id="tcp-explicit-rate",
        authors="R. Satyavolu, K. Duvedi, S. Kalyanaraman",
        title="Explicit rate control of TCP applications",
        short_title="Explicit rate control of TCP",
        venue="ATM Forum contribution 98-0152",
        year=1998,
        month="February",
        topic="explicit-rate control of TCP at routers (ER x T in the ACKs)",
    ),
    Paper(
        seed="seed002",
        id="abr-ubr-buffers",
        authors="S. Kalyanaraman, R. Jain, S. Fahmy, R. Goyal",
        title="Performance and Buffering Requirements of Internet Protocols over ATM ABR "
        "and UBR Services",
        short_title="ABR and UBR buffering",
        venue="IEEE Communications Magazine",
        year=1998,
        month="",
        topic="ABR and UBR buffer requirements, n sources",
    ),
    Paper(
        seed="seed003",
        id="fmmra",
        authors="L. An, N. Ansari, A. Arulambalam",
        title="TCP/IP traffic over ATM networks with FMMRA ABR flow and congestion control",
        short_title="TCP over FMMRA",
        venue="journal article, Elsevier Science",
        year=1998,
        month="",
        topic="EFCI, ERICA and FMMRA compared in a LAN",
    ),
    Paper(
        seed="seed004",
        id="gfr-dfba",
        authors="R. Goyal, R. Jain, S. Fahmy, B. Vandalore",
        title="Buffer Management for the GFR Service",
        short_title="GFR buffer management",
        venue="ATM Forum contribution 98-0405",
        year=1998,
        month="July",
        topic="GFR with Differential Fair Buffer Allocation",
    ),
)
"""The documents, in order."""

BY_SEED = {paper.seed: paper for paper in PAPERS}
BY_ID = {paper.id: paper for paper in PAPERS}


def readable(experiment_id: str) -> str:
    """The readable id of an experiment (``seed000-sec8`` -> ``tcp-over-abr-sec8``), or of
    a document (``seed000`` -> ``tcp-over-abr``)."""
    seed, sep, rest = experiment_id.partition("-")
    paper = BY_SEED.get(seed)
    if paper is None:
        return experiment_id
    return paper.id + sep + rest


def canonical(name: str) -> str:
    """The ``seedNNN[-...]`` id of a readable document or experiment id (lowercase); other
    names unchanged (lowercased)."""
    key = name.strip().lower()
    if key in BY_ID:
        return BY_ID[key].seed
    # the longest readable prefix first: no id is a prefix of another today, but be safe
    for paper in sorted(PAPERS, key=lambda p: -len(p.id)):
        if key.startswith(paper.id + "-"):
            return paper.seed + key[len(paper.id) :]
    return key
