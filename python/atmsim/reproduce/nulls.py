"""Null models shared by TCP over ABR (Kalyanaraman et al., 1996), ABR and UBR buffering
(Kalyanaraman et al., 1998) and TCP over FMMRA (An et al., 1998), and the rule for a row a null
model matches.

A null model predicts a published number from the paper's inputs alone (link rates,
ERICA's target, the cell, header and RM overheads, windows, numbers of sources, round
trips) and from textbook baselines, never from our runs and never from the paper's own
findings (its formulas and tables are what the rows judge). Each paper module builds
its predictions with these models and its own.

The rule (``unless_a_null_matches``): when a null model's prediction is within the
row's own tolerance of the published value, no simulation can add evidence to that
row, whatever it gives; the row is shown but not judged (``Quantity.unjudged``),
with the model named. The tolerance is never widened or narrowed here: a row that is
tightened says so with its own reason in its paper module. The rule depends on the
published value, the tolerance and the prediction only, so it is the same before
and after any run.
"""

from __future__ import annotations

from dataclasses import replace

from .experiments import NullModel, NullPrediction, Quantity

NO_EFFECT = NullModel(
    "no-effect",
    "the change the claim is about makes no difference: a ratio of 1, a difference of 0",
)
EQUAL_SHARE = NullModel(
    "equal-share",
    "identical sources get equal shares: Jain's index 1, every difference between them 0",
)
NO_LOSS = NullModel("no-loss", "no cell is lost: CLR 0, no frame merged")


def predict(model: NullModel, value: float) -> NullPrediction:
    return NullPrediction(model, float(value))


def matching(quantity: Quantity) -> list[NullPrediction]:
    """The null predictions the quantity's tolerance accepts for its published value."""
    if quantity.published is None or quantity.see is not None:
        return []
    return [
        null
        for null in quantity.nulls
        if quantity.tolerance.verdict(quantity.published, null.value) == "match"
    ]


def unless_a_null_matches(quantity: Quantity, why: str = "") -> Quantity:
    """The quantity, unjudged when a null model matches its published value (the
    models named, with ``why`` added when given)."""
    found = matching(quantity)
    if not found:
        return quantity
    models = ", ".join(f"{null.model.id} ({null.value:.4g})" for null in found)
    verb = "matches" if len(found) == 1 else "match"
    reason = f"null model {models} {verb} it within the tolerance"
    return replace(quantity, unjudged=reason + (f"; {why}" if why else ""))
