"""The resume decision's config hash (td3x.resume_plan): the keys it leaves out are td3x.inert_keys' RESUME_INERT,
and the hash of every committed run's config is what it was when the run was trained (it must keep resolving)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from td3x.config import flatten, from_saved, to_container
from td3x.inert_keys import RESUME_INERT
from td3x.resume import RESUME_KEYS
from td3x.resume_plan import config_hash, learning_keys
from td3x.run_dir import CONFIG_FILE

COMMITTED_RUNS = Path(__file__).resolve().parent.parent / "docs" / "results" / "runs"


@pytest.mark.parametrize(
    ("run", "expected"),
    [  # computed by the code before inert_keys existed (resume.py's own NOT_HASHED)
        ("reference_td3/hopper/none/seed=0/seed_0", "ca39f63cdba68590"),
        ("reference_bias/hopper/ahe/seed=0/seed_0", "542c03951643443a"),
        ("reference_td3_2018/halfcheetah/none/seed=0", "e0894c14cc0bf147"),
    ],
)
def test_the_hash_of_a_committed_runs_config_is_unchanged(run: str, expected: str) -> None:
    stored = yaml.safe_load((COMMITTED_RUNS / run / CONFIG_FILE).read_text())
    stored.pop("choices")  # a checkpoint stores the config without the group choices
    assert config_hash(stored) == expected  # what resuming computes from a checkpoint's stored config
    assert config_hash(to_container(from_saved(stored))) == expected, "this td3x would refuse to resume the run"


def test_the_hash_leaves_out_the_resume_inert_keys_only() -> None:
    config = to_container(from_saved({}))
    left_out = set(flatten(config)) - set(learning_keys(config))
    assert left_out == {key for key in flatten(config) if key.startswith("logging.")} | {
        "run.checkpoint_every",
        "run.log_every",
        "run.total_steps",
        "run.resume",
        "run.keep_buffer",
    }
    assert set(RESUME_KEYS) == set(RESUME_INERT) - {"run.resume"}  # td3x-resume continues whatever run.resume was
