"""A registration's plan and verdicts as tables: Markdown for people, CSV for programs (the same rows)."""

from __future__ import annotations

import math

import pandas as pd

from td3x.algo.seed_statistics import t_interval
from td3x.analysis.comparisons.judge import Judged, Verdicts
from td3x.analysis.comparisons.kinds import KINDS, Power
from td3x.analysis.comparisons.plan import Plan, Planned
from td3x.analysis.comparisons.schema import Registration
from td3x.analysis.comparisons.sides import Values, assumption
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
        "verdict": judged.status,
        "estimate": number(result.estimate, 3 if rank else 2),
        "interval": interval,
        "p (Holm)": _power(result.p) + (f" ({_power(judged.holm_p)})" if math.isfinite(judged.holm_p) else ""),
        "exact permutation p": _power(result.permutation_p) if math.isfinite(result.permutation_p) else "",
        "seeds": str(record["seeds"]),
        "means": " / ".join(number(values.mean) for values in judged.values),
        "power: registered; at the observed SDs": f"{_power(registered.power)}; {_power(observed.power)}",
        "MDD or bound reached: registered; observed": f"{number(registered.detectable)}; {number(observed.detectable)}",
    }


def sides_records(verdicts: Verdicts) -> pd.DataFrame:
    """One row per side and statistic a comparison reads (registration_sides.csv): its seeds complete of those
    registered, the seeds rerun, and, where a complete comparison reads it, its mean, SD and 95% Student-t interval
    over seeds (a side that only incomplete comparisons read shows no number)."""
    return pd.DataFrame(_side_records(verdicts))


def _side_records(verdicts: Verdicts) -> list[dict[str, object]]:
    return [_side_record(values, statistic, shown) for (_, statistic), (values, shown) in _sides(verdicts)]


def _sides(verdicts: Verdicts) -> list[tuple[tuple[str, str], tuple[Values, bool]]]:
    """Each (side, statistic) the comparisons read, with its values and whether a complete comparison reads it."""
    found: dict[tuple[str, str], tuple[Values, bool]] = {}
    for row in verdicts.rows:
        for values in row.values:
            key = (values.side.name, row.planned.comparison.statistic)
            found[key] = (values, row.judgement is not None or found.get(key, (values, False))[1])
    return list(found.items())


def _side_record(values: Values, statistic: str, shown: bool) -> dict[str, object]:
    record: dict[str, object] = {"side": values.side.name, "statistic": statistic, "kind": values.side.kind}
    if values.found is not None:
        reruns = " ".join(map(str, values.found.reruns))
        record |= {"complete": len(values.found.complete), "registered": values.found.registered, "reruns": reruns}
    if shown:
        low, high = _t_interval(values)
        record |= {"n": values.n, "mean": values.mean, "sd": values.sd, "ci95_low": low, "ci95_high": high}
    return record


def _t_interval(values: Values) -> tuple[float, float]:
    """The 95% Student-t interval of the side's mean over its seeds (NaN for a published mean)."""
    if values.values is None or len(values.values) < 2:
        return math.nan, math.nan
    _, low, high = t_interval(values.values)
    return float(low), float(high)


def _side_text(record: dict[str, object]) -> dict[str, str]:
    runs = f"{record['complete']} of {record['registered']}" if "complete" in record else ""
    if record.get("reruns"):
        runs += f"; reruns: seeds {record['reruns']}"
    if "mean" not in record:
        return {"kind": str(record["kind"]), "runs complete": runs}
    sd, low, high = (float(record[key]) for key in ("sd", "ci95_low", "ci95_high"))  # type: ignore[arg-type]
    return {
        "kind": str(record["kind"]),
        "runs complete": runs,
        "mean": number(float(record["mean"])),  # type: ignore[arg-type]
        "SD": number(sd) if sd > 0 else "none (a constant)",
        "95% CI (t)": f"[{number(low)}, {number(high)}]" if math.isfinite(low) else "",
    }


def _sides_text(verdicts: Verdicts) -> pd.DataFrame:
    records = _side_records(verdicts)
    return pd.DataFrame({f"{r['side']} ({r['statistic']})": _side_text(r) for r in records}).T.fillna("")


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
        "",
        "Each side as the comparisons read it (the mean, SD and 95% Student-t interval over its seeds):",
        "",
        markdown(_sides_text(verdicts)),
    ]
    return "\n".join(lines) + "\n"
