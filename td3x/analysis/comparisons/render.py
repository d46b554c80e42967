"""A registration's plan and verdicts as tables: Markdown for people, CSV for programs (the same rows)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from td3x.algo.seed_statistics import t_interval
from td3x.analysis.comparisons.judge import Judged, Verdicts
from td3x.analysis.comparisons.kinds import KINDS, Power
from td3x.analysis.comparisons.plan import Plan, Planned
from td3x.analysis.comparisons.schema import Registration
from td3x.analysis.comparisons.sides import Values, assumption
from td3x.analysis.render.tables import markdown, number, p_text


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
            "seeds": " / ".join("const" if side.sd == 0 else str(side.n) for side in row.sides),
            "assumed SD": " / ".join(number(side.sd) for side in row.sides),
            "power at": row.power.at,
            "power": number(row.power.power, 3),
            f"power at {factor}": number(row.scaled.power, 3),
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
    questions = _questions(registration)
    if questions:
        lines += ["", "### The questions the file asks", "", *questions]
    return "\n".join(lines) + "\n"


def _questions(registration: Registration) -> list[str]:
    """Each comparison's ``question`` (free text, optional), a line each."""
    return [f"- {c.name}: {c.question}" for c in registration.comparisons if c.question]


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
    other = ", ".join(f"{name} ({n})" for name, n in sorted(sizing.registered.items()) if n != sizing.n)
    return text + (f". Sides registering another n: {other}." if other else ". Every runs side registers that n.")


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
    """The Markdown row: the record's numbers at the tables' precision, no number where the comparison waits; a
    descriptive comparison's design numbers are left out (no claim was sized), its observed ones kept."""
    comparison, result = judged.planned.comparison, judged.judgement
    if result is None:
        return {"test": comparison.test, "verdict": judged.status}
    interval = "" if math.isnan(result.low) and math.isnan(result.high) else (
        f"[{number(result.low)}, {number(result.high)}] ({result.interval})"
    )
    registered = judged.planned.power if comparison.claim else Power(math.nan, math.nan, "")
    observed = judged.observed.power if judged.observed else Power(math.nan, math.nan, "")
    return {
        "test": comparison.test,
        "verdict": judged.status,
        "estimate": _estimate(judged),
        "interval": interval,
        "p (Holm)": p_text(result.p) + (f" ({p_text(judged.holm_p)})" if math.isfinite(judged.holm_p) else ""),
        "exact permutation p": p_text(result.permutation_p) if math.isfinite(result.permutation_p) else "",
        "seeds": " / ".join(str(values.n) if values.values is not None else "const" for values in judged.values),
        "means": " / ".join(number(values.mean) for values in judged.values),
        "power: registered; at the observed SDs": f"{number(registered.power, 3)}; {number(observed.power, 3)}",
        "MDD or bound reached: registered; observed": f"{number(registered.detectable)}; {number(observed.detectable)}",
    }


def _estimate(judged: Judged) -> str:
    """The estimate in its test's terms: a difference of means, Kendall's τ, or each side's count of its runs."""
    assert judged.judgement is not None
    test = judged.planned.comparison.test
    if test == "fisher":
        return "; ".join(f"{int(np.nansum(v.values))} of {v.n}" for v in judged.values if v.values is not None)
    return number(judged.judgement.estimate, 3 if test in ("rank_correlation", "spread") else 2)


def sides_records(verdicts: Verdicts) -> pd.DataFrame:
    """One row per side and statistic a comparison reads (registration_sides.csv): its seeds complete of those
    registered, the seeds rerun, the SD the design assumed, and, where a complete comparison reads it, its mean, SD
    and 95% Student-t interval over seeds (a side that only incomplete comparisons read shows no number)."""
    return pd.DataFrame(_side_records(verdicts))


def _side_records(verdicts: Verdicts) -> list[dict[str, object]]:
    """Each (side, statistic) the comparisons read, once, with whether a complete comparison reads it."""
    found: dict[tuple[str, str], dict[str, object]] = {}
    for row in verdicts.rows:
        for values, assumed in zip(row.values, row.planned.sides, strict=True):
            key = (values.side.name, row.planned.comparison.statistic)
            shown = row.judgement is not None or bool(found.get(key, {}).get("shown"))
            # the SD a claim's design assumed (a descriptive comparison sized nothing)
            earlier = found.get(key, {}).get("sd_assumed", math.nan)
            sd = assumed.sd if row.planned.comparison.claim else float(earlier)  # type: ignore[arg-type]
            found[key] = _side_record(values, key[1], shown, sd)
    return list(found.values())


def _side_record(values: Values, statistic: str, shown: bool, assumed_sd: float) -> dict[str, object]:
    record: dict[str, object] = {"side": values.side.name, "statistic": statistic, "kind": values.side.kind,
                                 "shown": shown, "sd_assumed": assumed_sd if values.found is not None else math.nan}
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
    assumed = float(record["sd_assumed"])  # type: ignore[arg-type]
    text = {"kind": str(record["kind"]), "runs complete": runs,
            "SD assumed": number(assumed) if math.isfinite(assumed) else ""}
    if "mean" not in record:
        return text
    sd, low, high = (float(record[key]) for key in ("sd", "ci95_low", "ci95_high"))  # type: ignore[arg-type]
    return text | {
        "mean": number(float(record["mean"])),  # type: ignore[arg-type]
        "SD": "none (a constant)" if record["kind"] == "published" and sd == 0 else number(sd),
        "95% CI (t)": f"[{number(low)}, {number(high)}]" if math.isfinite(low) else "",
    }


def _rerun_notes(registration: Registration) -> list[str]:
    """The file's declared reruns, each with why (the seeds are in the table of sides)."""
    notes = [f"- {side.name}: {side.rerun_note}" for side in registration.sides.values() if side.reruns]
    if not notes:
        return []
    return ["", "Reruns the file declares (seeds rerun from step 0 after a lost run whose files are gone):", "", *notes]


def verdicts_markdown(verdicts: Verdicts) -> str:
    registration = verdicts.registration
    done = sum(1 for row in verdicts.rows if row.judgement is not None)
    sides = {f"{r['side']} ({r['statistic']})": _side_text(r) for r in _side_records(verdicts)}
    lines = [
        f"## Registered comparisons: {registration.title}",
        "",
        f"From `{registration.path.name}`: {done} of {len(verdicts.rows)} comparisons complete and judged; "
        f"{verdicts.runs_complete} of {verdicts.runs_registered} registered runs complete. A verdict is given only "
        "when every run of the comparison is; an incomplete comparison shows no number. Per seed: "
        + "; ".join(f"*{name}*, {statistic.describe()}" for name, statistic in registration.statistics.items())
        + ".",
        "",
        markdown(pd.DataFrame({row.planned.comparison.name: _verdict_text(row) for row in verdicts.rows}).T.fillna("")),
        "",
        "Each side as the comparisons read it (the mean, SD and 95% Student-t interval over its seeds):",
        "",
        markdown(pd.DataFrame(sides).T.fillna("")),
        *_rerun_notes(verdicts.registration),
    ]
    questions = _questions(registration)
    if questions:
        lines += ["", "The questions the file asks:", "", *questions]
    return "\n".join(lines) + "\n"
