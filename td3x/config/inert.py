"""The config keys that never change what a run learns ("inert"): one core set, and each use's own extras.

Three questions need such a list, and their answers differ on purpose:

- **resume** (:data:`RESUME_INERT`): what may differ between a run and its resumption. The core, and
  ``run.total_steps`` (a larger one extends a run). ``run.num_threads``, ``run.num_seeds``, ``run.device`` and
  ``run.compile`` are *not* inert here: they change float results, or the process's layout of seeds. Of these,
  ``run.device`` may still change on resume (:data:`RESUME_MOVABLE`): it moves the run, as another CPU does.
- **sweep dir names** (:data:`DIR_NAME_INERT`, Hydra's ``override_dirname.exclude_keys`` in ``conf/train.yaml``):
  the core, and ``env`` and ``ablation`` (the job's subdirs name them), ``experiment`` and ``hydra/launcher``.
  ``run.total_steps`` and ``run.num_seeds`` stay in the name: they make other runs.
- **report rows** (:data:`REPORT_INERT`): runs that differ only in these share a table row. The core, the table's
  own axes (``seed``, ``env.id``, ``paper_row``), the keys that change only float rounding (``run.num_seeds``,
  ``run.num_threads``, ``run.device``, ``run.compile``, ``run.numerics``), ``seeds.evaluation_sets`` (extra
  evaluations of the same training) and what a ``config.yaml`` records beside the config: the group ``choices`` and
  ``effective_seeds`` (their values are in the other keys).

An entry names a key or a whole node (``logging``: every key below it). :func:`leaf_keys` spells ``logging`` out
for Hydra, which matches bare keys only.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from td3x.config.enums import Numerics, Precision
from td3x.config.messages import schema_keys
from td3x.config.schema import SeedsConfig

# where and how a run is logged, checkpointed and resumed: never what it learns
CORE = ("logging", "run.checkpoint_every", "run.log_every", "run.resume", "run.keep_buffer")

RESUME_INERT = (*CORE, "run.total_steps")
# where a run computes, which a resumed run may change although its numbers then differ from an uninterrupted run's
# (as they do on a CPU of other fp32 kernels, which no key names): the resume records each sitting's device in
# provenance.json and warns of the move; a run trained on a GPU goes on on a CPU-only machine with run.device=cpu
RESUME_MOVABLE = ("run.device",)
DIR_NAME_INERT = (*CORE, "env", "ablation", "experiment", "hydra/launcher")
REPORT_INERT = (
    *CORE,
    "seed",
    "env.id",
    "paper_row",
    "run.num_seeds",  # K seeds in one process learn by the same math as alone; only float rounding differs
    "run.num_threads",
    "run.device",
    "run.compile",
    "run.numerics",  # native or portable kernels: the same math, other rounding (the compute table marks a mix)
    "seeds.evaluation_sets",  # more sets of evaluation start states: the same training, more columns in eval.csv
    "choices",
    "effective_seeds",  # each source's seed as used: its values are in seed and seeds.*
)


# keys added after runs were trained, at the value that changes nothing (a config written before they existed, without
# them, learns the same): the resume hash leaves them out at that value, and the report's row keys fill them in
NEUTRAL_DEFAULTS = {
    "run.numerics": Numerics.native.name,
    "run.precision": Precision.fp32.name,
    **{f"seeds.{field.name}": field.default for field in dataclasses.fields(SeedsConfig)},
}


def without_neutral_defaults(keys: dict[str, Any]) -> dict[str, Any]:
    """``keys`` (flattened) without those at their :data:`NEUTRAL_DEFAULTS` value."""
    return {key: value for key, value in keys.items() if key not in NEUTRAL_DEFAULTS or value != NEUTRAL_DEFAULTS[key]}


def with_neutral_defaults(keys: dict[str, Any]) -> dict[str, Any]:
    """``keys`` (flattened) with those a config written before them lacks, at their :data:`NEUTRAL_DEFAULTS` value."""
    return {**NEUTRAL_DEFAULTS, **keys}


def is_inert(key: str, inert: tuple[str, ...]) -> bool:
    """Whether the dotted ``key`` is one of ``inert`` or lies below one of its nodes."""
    return any(key == entry or key.startswith(f"{entry}.") for entry in inert)


def leaf_keys(inert: tuple[str, ...]) -> list[str]:
    """``inert`` with the ``logging`` node replaced by the keys below it (``logging.project``, ...), for Hydra;
    the other entries as they are (``env`` in :data:`DIR_NAME_INERT` is the group choice, not a node to expand)."""
    leaves: list[str] = []
    for entry in inert:
        leaves += [key for key in schema_keys() if key.startswith("logging.")] if entry == "logging" else [entry]
    return leaves
