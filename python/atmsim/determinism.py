"""Whether the run seed can change a scenario's results.

The core draws random numbers from the run seed in these places only (one
stream per component, docs/model.md "Time and order"):

- sources: ``poisson``, ``geometric_onoff`` (bursts, silences and its phase),
  ``vbr_onoff`` with ``distribution = "exponential"``, ``frames`` with
  ``arrivals = "poisson"`` or a ``[lo, hi]`` frame size;
- ports: RED (IP) and DFBA's probabilistic drop (ATM);
- TCP receivers with ``processing_jitter`` > 0;
- the order of cells that reach a port together (in one cell slot under
  ``run.arbitration = "slotted"``, the default; at the same instant under
  ``"random"``): a hash of the run seed, the instant and the input.

``seed_dependence`` lists which of these a scenario has. The last one is decided
conservatively: arrivals can only tie when the network has two or more inputs of
cells (ATM links delivering cells, cell sources, ABR source end systems, TCP
connections over ATM), so a scenario with at most one cannot depend on the
order; any other scenario under slotted or random arbitration is counted as
seed-dependent, although in some the ties never happen. An empty list therefore proves that the
run seed changes nothing (pure IP scenarios without RED or jitter, cell scenarios of
deterministic sources under ``arbitration = "scheduling_order"``).
"""

from __future__ import annotations

RANDOM_SOURCE_KINDS = ("poisson", "geometric_onoff")
"""Source models that always draw."""


def seed_dependence(core: dict) -> list[str]:
    """What in the core JSON draws from the run seed (module docstring); empty when the
    run seed provably cannot change the results."""
    reasons = []
    for source in core.get("sources", []):
        model = source["model"]
        kind = model["kind"]
        if (
            kind in RANDOM_SOURCE_KINDS
            or (kind == "vbr_onoff" and model.get("distribution") == "exponential")
            or (
                kind == "frames"
                and (model.get("arrivals") == "poisson" or "uniform" in model["frame_cells"])
            )
        ):
            reasons.append(f"source {source['name']} ({kind}) draws its arrivals")
    for link in core.get("links", []):
        policy = link.get("policy", {}).get("kind")
        if policy in ("red", "dfba"):
            reasons.append(f"link {link['name']} drops at random ({policy})")
    for flow in core.get("flows", []):
        if flow.get("processing_jitter_ps", 0) > 0:
            reasons.append(f"flow {flow['name']} has a receiver processing jitter")
    arbitration = core.get("arbitration", "slotted")
    if arbitration != "scheduling_order":
        vcs = core.get("vcs", [])
        inputs = (
            sum(1 for link in core.get("links", []) if link.get("layer", "atm") == "atm")
            + len(core.get("sources", []))
            + sum(1 for vc in vcs if vc.get("class") == "abr")
            + 2 * sum(1 for flow in core.get("flows", []) if flow.get("layer") == "atm")
        )
        if inputs > 1:
            reasons.append(
                "cells reaching a port together are ordered by the run seed "
                f'(run.arbitration = "{arbitration}")'
            )
    return reasons


def seed_note(core: dict, seed: int) -> str | None:
    """The one-line note ``atmsim run --seed`` prints when the run seed cannot matter, else
    None."""
    if seed_dependence(core):
        return None
    return (
        f"note: --seed {seed} changes nothing here: the scenario draws no random number "
        "(no random source, RED, DFBA or processing jitter, and no simultaneous cell "
        "arrivals to order)"
    )
