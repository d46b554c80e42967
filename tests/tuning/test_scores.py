"""Trial scores (td3x.tuning.scores): each metric of a seed from its eval.csv, read through the report's reader (a
repeated or unreadable evaluation refused, naming it), and the fresh-seed interval, by hand."""

from __future__ import annotations

from pathlib import Path

import pytest

from td3x.rundir.layout import RunFileError
from td3x.tuning.scores import mean_interval, score_until


def test_each_metric_of_a_seed_from_its_eval_csv(tmp_path: Path) -> None:
    rows = [(0, -10.0), *((100 * i, float(i)) for i in range(1, 12))]  # step 0, then returns 1 .. 11
    (tmp_path / "eval.csv").write_text("step,return_mean\n" + "".join(f"{s},{r}\n" for s, r in rows))
    assert score_until(tmp_path, "mean_return", None) == pytest.approx((-10 + 66) / 12)
    assert score_until(tmp_path, "final_return", None) == 11.0
    assert score_until(tmp_path, "last10_return", None) == pytest.approx(6.5)  # 2 .. 11
    assert score_until(tmp_path, "mean_return", 200) == pytest.approx((-10 + 1 + 2) / 3)  # a running score


def test_a_seed_s_eval_csv_that_repeats_a_step_is_refused_naming_it(tmp_path: Path) -> None:
    """The tuner reads eval.csv through the report's reader: a repeated evaluation would be scored twice."""
    (tmp_path / "eval.csv").write_text("step,return_mean\n0,-10.0\n100,1.0\n100,1.0\n200,2.0\n")
    with pytest.raises(RunFileError, match=r"eval.csv has step 100 on line 4 after step 100 on line 3"):
        score_until(tmp_path, "mean_return", None)
    (tmp_path / "eval.csv").write_text("step,return_mean\n0,-10.0\n100,oops\n")
    with pytest.raises(RunFileError, match=r"has 'oops' in its return_mean column, not a number"):
        score_until(tmp_path, "final_return", 100)


def test_the_fresh_seed_interval_is_student_t_over_seeds() -> None:
    mean, low, high = mean_interval([1.0, 3.0])  # sd √2, standard error 1, t(0.975, 1 dof) = 12.7062
    assert mean == 2.0 and low == pytest.approx(2 - 12.7062, abs=1e-4) and high == pytest.approx(2 + 12.7062, abs=1e-4)
