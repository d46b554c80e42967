"""scripts/cleanrl_reference.py, CleanRL's TD3 timed beside td3x by ``bench_sps.py --cleanrl``: the command line it
gives CleanRL's script, which presets have a partner, and how a rate is read from the script's output.

CleanRL is not on PyPI in a version that runs here (its releases need Python < 3.11), so its script itself runs only
where a checkout is at hand (Performance has the measured ratios); here a script at CleanRL's path in a folder laid
out as its checkout prints its lines at known times."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from helpers.scripts import SCRIPTS, load_script

import td3x

cleanrl = load_script("cleanrl_reference")


def checkout_with(tmp_path: Path, body: str) -> Path:
    """A folder laid out as CleanRL's checkout whose TD3 script is ``body``."""
    script = tmp_path / "cleanrl" / "cleanrl" / "td3_continuous_action.py"
    script.parent.mkdir(parents=True)
    script.write_text(textwrap.dedent(body))
    return tmp_path / "cleanrl"


def test_the_command_line_carries_the_preset_s_hyper_parameters_and_just_enough_steps() -> None:
    config = td3x.compose(["agent=td3", "env=hopper", "seed=7", "noise.std=0.2"])
    argv = cleanrl.arguments(config, learning_starts=1000, steps=500)
    assert argv[-1] == "--no-cuda"
    values = dict(zip(argv[:-1:2], argv[1:-1:2], strict=True))
    assert values == {
        "--env-id": "Hopper-v5",
        "--seed": "7",
        "--total-timesteps": "1601",  # its first rate line at step 1100, the last at 1600
        "--learning-starts": "1000",
        "--learning-rate": "0.0003",
        "--buffer-size": "1000000",
        "--batch-size": "256",
        "--gamma": "0.99",
        "--tau": "0.005",
        "--policy-frequency": "2",
        "--policy-noise": "0.2",
        "--noise-clip": "0.5",
        "--exploration-noise": "0.2",
    }


@pytest.mark.parametrize(
    ("overrides", "reason"),
    [
        (["agent=td3"], None),
        (["agent=td3_paper"], "its networks are 256-256, the preset's [400, 300]"),
        (["agent=td3", "agent.critic_lr=1e-3"], "it has one learning rate, the preset two"),
        (["agent=td3", "ablation=no_twin"], "it has two critics"),
    ],
)
def test_only_a_preset_cleanrl_s_script_can_run_has_a_partner(overrides: list[str], reason: str | None) -> None:
    assert cleanrl.mismatch(td3x.compose(overrides)) == reason


def test_the_rate_is_the_steps_between_the_first_and_last_rate_lines_over_their_arrival(tmp_path: Path) -> None:
    """Five rate lines 0.2 s apart: 400 steps over 0.8 s, whatever came before the first (start-up, warm-up)."""
    checkout = checkout_with(
        tmp_path,
        """
        import json, os, sys, time
        from pathlib import Path
        time.sleep(0.5)  # start-up and warm-up: never timed
        for line in range(5):
            print(f"global_step={1100 + 100 * line}, episodic_return=1.0")
            print("SPS: 1")
            time.sleep(0.2)
        seen = {"argv": sys.argv[1:], "cwd": os.getcwd(), "threads": os.environ["OMP_NUM_THREADS"],
                "path": os.environ["PYTHONPATH"]}
        (Path(__file__).parents[1] / "seen.json").write_text(json.dumps(seen))
        """,
    )
    config = td3x.compose(["agent=td3", "env=hopper"])
    rate = cleanrl.time_cleanrl(config, 400, checkout, learning_starts=1000)
    assert 400 / 1.2 < rate <= 400 / 0.8 * 1.05
    seen = json.loads((checkout / "seen.json").read_text())
    assert seen["argv"] == cleanrl.arguments(config, 1000, 400) and seen["threads"] == "1"
    assert seen["path"].split(":")[0] == str(checkout)  # its cleanrl_utils import
    assert not Path(seen["cwd"]).exists()  # its TensorBoard files went to a folder since removed


def test_a_script_that_fails_is_one_line_naming_its_last_error(tmp_path: Path) -> None:
    checkout = checkout_with(
        tmp_path,
        """
        import sys
        print("SPS: 1")
        sys.stderr.write("Traceback (most recent call last):\\n  ...\\nKeyError: 'final_observation'\\n")
        sys.exit(1)
        """,
    )
    with pytest.raises(SystemExit) as exit_:
        cleanrl.time_cleanrl(td3x.compose(["agent=td3", "env=hopper"]), 100, checkout, learning_starts=1000)
    assert str(exit_.value) == "bench_sps.py: CleanRL's TD3 exited 1: KeyError: 'final_observation'"


@pytest.mark.slow
def test_the_bench_refuses_what_cleanrl_cannot_measure_one_line_each(tmp_path: Path) -> None:
    arguments = ["--cleanrl", str(tmp_path / "nowhere"), "--presets", "td3_paper", "--sb3-steps", "150"]
    result = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench_sps.py"), *arguments], cwd=tmp_path, capture_output=True, text=True
    )
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"bench_sps.py: error: --cleanrl: {tmp_path / 'nowhere'} has no cleanrl/td3_continuous_action.py; pass a "
        "checkout of https://github.com/vwxyzjn/cleanrl",
        "bench_sps.py: error: --sb3-steps: 150 is not a multiple of 100 (CleanRL prints its rate every 100)",
        "bench_sps.py: error: --cleanrl: CleanRL's TD3 runs none of the presets: td3_paper: its networks are "
        "256-256, the preset's [400, 300]",
    ]
    assert list(tmp_path.iterdir()) == []
