"""A registration's plan and verdicts as tables: Markdown for people, CSV for programs (the same rows)."""

from __future__ import annotations

import math

import pandas as pd

from td3x.analysis.comparisons.judge import Judged, Verdicts
from td3x.analysis.comparisons.kinds import KINDS, Power
from td3x.analysis.comparisons.plan import Plan, Planned
from td3x.analysis.comparisons.schema import Registration
from td3x.analysis.comparisons.sides import assumption
from td3x.analysis.tables import markdown, number


def _power(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "n/a"


def _family(registration: Registration, row: Planned) -> str:
    comparison = row.comparison
    if not comparison.claim:
        return "descriptive"
    size = registration.family_size(comparison)
    return f"{comparison.family} ({size})" if comparison.family else "alone (1)"


def plan_frame(plan: Plan) -> pd.DataFrame:
    """One row per comparison: its test, level, seeds, assumed SDs, power and detectable effect at the assumed
    SDs and at sd_factor times them."""
    registration = plan.registration
    factor = f"{registration.sd_factor:g}×SD"
    rows = []
    for row in plan.rows:
        kind = KINDS[row.comparison.test]
        rows.append({
            "comparison": row.comparison.name,
            "test": row.comparison.test,
            "family (claims)": _family(registration, row),
            "level": f"{row.alpha:.4g}",
            "seeds": " / ".join(str(side.n) if side.sd > 0 else "const" for side in row.sides),
            "assumed SD": " / ".join(number(side.sd) for side in row.sides),
            "power at": row.power.at,
            "power": _power(row.power.power),
            f"power at {factor}": _power(row.scaled.power),
            kind.detectable_name if kind.detectable_name != "-" else "detectable": number(row.power.detectable),
            f"at {factor}": number(row.scaled.detectable),
        })
    return pd.DataFrame(rows)


def _merge_detectable(frame: pd.DataFrame) -> pd.DataFrame:
    """One column for the detectable effect, whatever each test calls it (MDD, smallest bound)."""
    names = [name for name in ("MDD", "smallest bound", "detectable") if name in frame]
    merged = frame[names].bfill(axis=1).iloc[:, 0] if names else None
    frame = frame.drop(columns=names)
    if merged is not None:
        frame.insert(len(frame.columns) - 1, "MDD or smallest bound", merged.fillna("n/a"))
    return frame


def sides_frame(registration: Registration) -> pd.DataFrame:
    """One row per side: its kind, seeds, and what the design assumes of it with the source."""
    rows = []
    for name, side in registration.sides.items():
        statistic_name = next((c.statistic for c in registration.comparisons if name in c.sides), None)
        if statistic_name is None:
            continue
        assumed = assumption(registration, side, registration.statistics[statistic_name])
        seeds = side.runs.seeds if side.runs else ()
        rows.append({
            "side": name,
            "kind": side.kind,
            "seeds": f"{seeds[0]}..{seeds[-1]} ({len(seeds)})" if seeds else str(assumed.n or "-"),
            "mean": number(assumed.mean),
            "SD": number(assumed.sd) if assumed.sd > 0 else "none (a constant)",
            "from": assumed.source,
        })
    return pd.DataFrame(rows)


def plan_markdown(plan: Plan) -> str:
    """The plan as a page: the design's numbers, the sides' assumptions, the sizing rule's n."""
    registration = plan.registration
    lines = [
        f"## Plan: {registration.title}",
        "",
        f"From `{registration.path.name}`, before any of its runs. α {registration.alpha:g} (each claim at α over its "
        f"Holm family), power wanted {registration.power:g}; every power is also given at the assumed SDs times "
        f"{registration.sd_factor:g}.",
        "",
        markdown(_merge_detectable(plan_frame(plan)).set_index("comparison")),
        "",
        "### Sides and what the design assumes",
        "",
        markdown(sides_frame(registration).set_index("side")),
    ]
    if plan.sizing is not None:
        lines += ["", "### Sizing rule", "", _sizing_text(plan)]
    return "\n".join(lines) + "\n"


def _sizing_text(plan: Plan) -> str:
    sizing, rule = plan.sizing, plan.registration.sizing
    assert sizing is not None and rule is not None
    at = f"the assumed SDs times {plan.registration.sd_factor:g}" if rule.at_sd_factor else "the assumed SDs"
    text = (
        f"The fewest seeds per runs side from {rule.min_seeds} to {rule.max_seeds} at which every claim reaches power "
        f"{plan.registration.power:g} at {at}: **n = {sizing.n}**"
    )
    if not sizing.reached:
        text += f" (the cap; below the power there: {', '.join(sizing.short)})"
    other = sorted(name for name, n in sizing.registered.items() if n != sizing.n)
    text += (
        f". Sides registering another n: {', '.join(f'{name} ({sizing.registered[name]})' for name in other)}."
        if other
        else ". Every runs side registers that n."
    )
    return text


def verdicts_frame(verdicts: Verdicts) -> pd.DataFrame:
    """One row per comparison, as numbers (registration.csv): each side's seeds and mean, the estimate and its
    interval, p, Holm's p, the exact permutation p, the verdict, and the registered power and detectable effect
    beside the same at the spreads the runs showed. An incomplete comparison's numbers are empty."""
    return pd.DataFrame([_verdict_record(judged) for judged in verdicts.rows])


def _verdict_record(judged: Judged) -> dict[str, object]:
    comparison, result = judged.planned.comparison, judged.judgement
    record: dict[str, object] = {"comparison": comparison.name, "test": comparison.test, "role": comparison.role,
                                 "family": comparison.family or "", "verdict": judged.status}
    if result is None:
        return record
    observed = judged.observed
    return {
        **record,
        "seeds": " / ".join(str(values.n) if values.values is not None else "const" for values in judged.values),
        "means": " / ".join(repr(values.mean) for values in judged.values),
        "estimate": result.estimate,
        "low": result.low,
        "high": result.high,
        "interval": result.interval,
        "p": result.p,
        "holm_p": judged.holm_p,
        "permutation_p": result.permutation_p,
        "power_registered": judged.planned.power.power,
        "power_observed_sds": observed.power.power if observed else math.nan,
        "detectable_registered": judged.planned.power.detectable,
        "detectable_observed_sds": observed.power.detectable if observed else math.nan,
    }


def _verdict_text(judged: Judged) -> dict[str, str]:
    """The Markdown row: the record's numbers at the tables' precision, no number where the comparison waits."""
    record = _verdict_record(judged)
    if judged.judgement is None:
        return {"test": str(record["test"]), "verdict": judged.status}
    result, rank = judged.judgement, record["test"] == "rank_correlation"
    registered = judged.planned.power
    observed = judged.observed.power if judged.observed else Power(math.nan, math.nan, "")
    interval = "" if math.isnan(result.low) and math.isnan(result.high) else (
        f"[{number(result.low)}, {number(result.high)}] ({result.interval})"
    )
    return {
        "test": str(record["test"]),
        "seeds": str(record["seeds"]),
        "means": " / ".join(number(values.mean) for values in judged.values),
        "estimate": number(result.estimate, 3 if rank else 2),
        "interval": interval,
        "p (Holm)": _power(result.p) + (f" ({_power(judged.holm_p)})" if math.isfinite(judged.holm_p) else ""),
        "verdict": judged.status,
        "power: registered; at the observed SDs": f"{_power(registered.power)}; {_power(observed.power)}",
        "MDD or bound reached: registered; observed": f"{number(registered.detectable)}; {number(observed.detectable)}",
    }


def verdicts_markdown(verdicts: Verdicts) -> str:
    registration = verdicts.registration
    done = sum(1 for row in verdicts.rows if row.judgement is not None)
    lines = [
        f"## Registered comparisons: {registration.title}",
        "",
        f"From `{registration.path.name}`: {done} of {len(verdicts.rows)} comparisons complete and judged; "
        f"{verdicts.runs_complete} of {verdicts.runs_registered} registered runs complete. A verdict is given only "
        "when every run of the comparison is; an incomplete comparison shows no number.",
        "",
        markdown(pd.DataFrame({row.planned.comparison.name: _verdict_text(row) for row in verdicts.rows}).T.fillna("")),
    ]
    return "\n".join(lines) + "\n"
