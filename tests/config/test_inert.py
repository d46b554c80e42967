"""The inert keys (td3x.config.inert) where the sweep and the report use them: Hydra's dir-name exclude_keys in
conf/train.yaml, and the keys td3x-report groups rows across."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pandas as pd
import yaml
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from td3x.analysis.reading.cells import result_keys
from td3x.analysis.reading.runs import Run
from td3x.config.hydra import CONF_DIR, flatten, register_configs
from td3x.config.inert import DIR_NAME_INERT, leaf_keys
from td3x.config.schema import SEED_SOURCES


def test_train_yamls_dir_name_exclude_keys_are_the_dir_name_inert_keys() -> None:
    """Hydra reads exclude_keys from YAML, so conf/train.yaml spells out DIR_NAME_INERT: the same keys in the same
    order, and no experiment sets others."""
    train = yaml.safe_load((CONF_DIR / "train.yaml").read_text())
    assert train["hydra"]["job"]["config"]["override_dirname"]["exclude_keys"] == leaf_keys(DIR_NAME_INERT)
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for experiment in sorted(path.stem for path in (CONF_DIR / "experiment").glob("*.yaml")):
            cfg = compose("train", overrides=[f"+experiment={experiment}"], return_hydra_config=True)
            assert list(cfg.hydra.job.config.override_dirname.exclude_keys) == leaf_keys(DIR_NAME_INERT), experiment


def a_run(config: dict[str, Any]) -> Run:
    return Run(path=Path("run"), config=config, evals=pd.DataFrame(), summary=None, problem=None)


def test_the_report_tells_rows_apart_by_the_learning_keys_only() -> None:
    """A row is a paper_row and its values of what the run learns from: the agent, the noise, the env's settings
    (not its id: the table's column) and the training schedule; never the seed, the logging, the checkpoints,
    the process's layout or device, or the group choices (their values are in the other keys)."""
    register_configs()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        composed = compose("train", overrides=["env=hopper"])
    config = cast(dict[str, Any], OmegaConf.to_container(composed, resolve=True, enum_to_str=True))
    config["choices"] = {"env": "hopper", "agent": "td3", "noise": "gaussian", "ablation": "none"}
    everything = set(flatten(config))
    schedule = {"run.total_steps", "run.eval_every", "run.eval_episodes", "run.eval_seed"}
    sources = {f"seeds.{name}" for name in SEED_SOURCES}  # a pinned source changes what is learned
    precision = {"run.precision"}  # bf16 products learn other numbers than fp32's, not only other rounding
    learning = (
        {key for key in everything if key.startswith(("agent.", "noise.", "env."))} - {"env.id"}
        | schedule
        | sources
        | precision
    )
    assert set(result_keys(a_run(config))) == learning
    assert everything - learning == {
        "seed",
        "paper_row",
        "env.id",
        "run.checkpoint_every",
        "run.log_every",
        "run.resume",
        "run.keep_buffer",
        "run.device",
        "run.num_threads",
        "run.num_seeds",
        "run.numerics",
        "run.compile",
        "seeds.evaluation_sets",
        *(key for key in everything if key.startswith(("logging.", "choices."))),
    }
