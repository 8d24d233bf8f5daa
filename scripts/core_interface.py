"""Render the key tables of docs/core-interface.md from docs/core-schema.json.

The JSON Schema of the core JSON is generated from the Rust scenario types
(``atmsim_core::scenario::json_schema``); this script turns it into one
Markdown table per object (key, type, default, allowed range, meaning) and
writes them between the markers of docs/core-interface.md::

    python scripts/core_interface.py           # rewrite the section
    python scripts/core_interface.py --check   # exit 1 if it is not current

``bash scripts/update_contract.sh`` regenerates the schema and then runs this.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SCHEMA_FILE = REPO / "docs" / "core-schema.json"
DOC_FILE = REPO / "docs" / "core-interface.md"
BEGIN = "<!-- BEGIN GENERATED from docs/core-schema.json by scripts/core_interface.py -->"
END = "<!-- END GENERATED -->"

PS_PER_S = 10**12

# Named values of the integer bounds, shown instead of their digits.
NAMED_INTEGERS = {
    2**64 - 1: "2^64 - 1",
    2**53: "2^53",
    2**32 - 1: "2^32 - 1",
    2**32 - 2: "2^32 - 2",
    2**24 - 1: "2^24 - 1",
    65535 << 14: "65535 x 2^14",
}

# The order of the sections: the top level, then its objects as they nest.
ORDER = [
    "Scenario",
    "Arbitration",
    "NodeSpec",
    "NodeKind",
    "LinkSpec",
    "Layer",
    "PolicySpec",
    "DfbaZ",
    "AlgorithmSpec",
    "EricaVariant",
    "VcSpec",
    "ServiceClass",
    "AbrParams",
    "RateControlSpec",
    "AckControlSpec",
    "WindowRule",
    "GfrParams",
    "SourceSpec",
    "SourceModel",
    "FrameSize",
    "Distribution",
    "Arrivals",
    "FlowSpec",
    "Variant",
    "TimerMode",
    "RttArithmetic",
    "ProbeSpec",
    "CaptureSpec",
    "CaptureLink",
    "CaptureStamp",
]


def one_line(text: str) -> str:
    """A description on one line, safe in a table cell."""
    return " ".join(text.split()).replace("|", "\\|")


def number(value: Any) -> str:
    """A bound as a person reads it: named powers, powers of ten, separators."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        if value in NAMED_INTEGERS:
            return NAMED_INTEGERS[value]
        digits = str(value).rstrip("0")
        zeros = len(str(value)) - len(digits)
        if value >= 10**6 and zeros >= 6:
            mantissa = "" if digits == "1" else f"{digits[0]}.{digits[1:]} x ".replace(". x", " x")
            return f"{mantissa}10^{len(str(value)) - 1}"
        return f"{value:,}"
    if value == int(value) and abs(value) <= 2**64:
        return number(int(value))
    return f"{value:.10g}"


def seconds(ps: int) -> str:
    """A time in ps as the nearest plain unit."""
    for unit, size in (("s", PS_PER_S), ("ms", 10**9), ("us", 10**6), ("ns", 10**3), ("ps", 1)):
        if ps >= size:
            return f"{number(ps / size)} {unit}"
    return "0"


def range_text(key: str, prop: dict) -> str:
    """The allowed values of a property from its range keywords."""
    if any("const" in alt for alt in prop.get("anyOf", [])):
        alternatives = []
        for alt in prop["anyOf"]:
            if "const" in alt:
                alternatives.append(number(alt["const"]))
            else:
                alternatives.append(range_text(key, alt))
        return " or ".join(alternatives)
    if "prefixItems" in prop:
        ranges = {range_text(key, item) for item in prop["prefixItems"]}
        return f"each {ranges.pop()}" if len(ranges) == 1 else ""
    if prop.get("type") == "array":
        low, high = prop.get("minItems"), prop.get("maxItems")
        if low is None and high is None:
            return ""
        return f"{number(low or 0)} to {number(high)} entries"
    if "exclusiveMinimum" in prop:
        low, low_bracket = prop["exclusiveMinimum"], "("
    elif "minimum" in prop:
        low, low_bracket = prop["minimum"], "["
    else:
        return ""
    if "maximum" not in prop:
        # A plain unsigned integer (an index): nothing to add.
        return "" if low == 0 and low_bracket == "[" else f"> {number(low)}"
    high = prop["maximum"]
    text = f"{low_bracket}{number(low)}, {number(high)}]"
    if key.endswith("_ps") and isinstance(high, int):
        shown_low = "0" if low == 0 else seconds(low)
        text += f" ({low_bracket}{shown_low}, {seconds(high)}])"
    return text


def type_text(prop: dict) -> str:
    """The JSON type of a property, objects linked to their section."""
    if "$ref" in prop:
        name = prop["$ref"].rsplit("/", 1)[1]
        return f"[{name}](#{name.lower()})"
    kind = prop.get("type")
    if kind == "array":
        if "prefixItems" in prop:
            return "[" + ", ".join(type_text(p) for p in prop["prefixItems"]) + "]"
        return "array of " + type_text(prop.get("items", {}))
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind is None and "anyOf" in prop:
        return " or ".join(type_text(p) for p in prop["anyOf"])
    return kind or "any"


def default_text(key: str, prop: dict, required: list) -> str:
    """'required', or the value an absent key takes."""
    if key in required:
        return "required"
    if "default" in prop:
        return "`" + json.dumps(prop["default"]) + "`"
    return "optional"


def property_rows(obj: dict, skip: tuple = (), meaning: str = "") -> list:
    """The table rows of an object's properties, alphabetical; `meaning` stands
    for a missing description."""
    required = obj.get("required", [])
    rows = []
    for key in sorted(obj.get("properties", {})):
        if key in skip:
            continue
        prop = obj["properties"][key]
        rows.append(
            f"| `{key}` | {type_text(prop)} | {default_text(key, prop, required)} "
            f"| {range_text(key, prop)} | {one_line(prop.get('description', meaning))} |"
        )
    return rows


TABLE_HEAD = ["| key | type | default | range | meaning |", "|---|---|---|---|---|"]


def object_section(obj: dict) -> list:
    extra = "" if obj.get("additionalProperties") is False else " (other keys allowed)"
    lines = [one_line(obj.get("description", "")) + extra, ""]
    return lines + TABLE_HEAD + property_rows(obj)


def variant_tag(variant: dict) -> tuple:
    """(tag key, tag value) of a variant of a tagged union."""
    for key, prop in variant.get("properties", {}).items():
        if "const" in prop:
            return key, prop["const"]
    (key,) = variant["required"]
    return key, None


def union_section(name: str, union: dict) -> list:
    lines = [one_line(union.get("description", "")), ""]
    variants = union["oneOf"]
    if all(v.get("type") == "string" for v in variants):
        for v in variants:
            lines.append(f'- `"{v["const"]}"`: {one_line(v.get("description", ""))}')
        return lines
    for v in variants:
        tag, value = variant_tag(v)
        description = one_line(v.get("description", ""))
        if value is None:
            # An object of a single key (externally tagged): one row.
            lines += TABLE_HEAD[:2] if lines[-1] == "" else []
            row = property_rows(v, meaning=description)[0]
            lines.append(row.replace("| required |", "| one of these |", 1))
            continue
        lines += [f'`{tag}` = `"{value}"`: {description}', ""]
        rows = property_rows(v, skip=(tag,))
        lines += (TABLE_HEAD + rows if rows else ["No other key."]) + [""]
    return lines


def render(schema: dict) -> str:
    """The generated section (without its markers) for `schema`."""
    defs = schema["$defs"]
    missing = sorted(set(defs) - set(ORDER))
    if missing:
        raise SystemExit(f"add these definitions to ORDER in {__file__}: {missing}")
    lines = []
    for name in ORDER:
        body = schema if name == "Scenario" else defs[name]
        lines += ["", f"### {name}", ""]
        lines += union_section(name, body) if "oneOf" in body else object_section(body)
        while lines[-1] == "":
            lines.pop()
    return "\n".join(lines).strip("\n") + "\n"


def rewrite(doc: str, section: str) -> str:
    """`doc` with the text between the markers replaced by `section`."""
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{section}{END}{tail}"


def main(argv: list | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the section is stale")
    args = parser.parse_args(argv)
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    doc = DOC_FILE.read_text(encoding="utf-8")
    new = rewrite(doc, render(schema))
    if args.check:
        if new != doc:
            print(f"{DOC_FILE} is not current: run python scripts/core_interface.py")
            return 1
        return 0
    DOC_FILE.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
