"""The pre-registration file (``docs/results/preregistration.yaml``; docs/results/preregistration.md says what it
fixes), read and checked in one place for every part of the report that reads it.

Its sections: the shared rules (``common``), the registered comparisons (``peer``, ``bf16``, the amendment
``bf16_fp32_tanh``, ``seed_study``, its amendments ``stalled_actors`` and ``stalled_actors_control``,
``paper_horizon``), the published tests' post-hoc power (``post_hoc``) and the
compute estimate (``compute``). A file that cannot be read, is no mapping of those sections, or lacks a key a reader
asks for is refused with one line naming the file and the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from td3x.analysis.input_files import InputFileError, load_yaml, read_text, yaml_problem
from td3x.analysis.runs import Run

FILE_SECTIONS = (
    "schema",
    "common",
    "peer",
    "bf16",
    "bf16_fp32_tanh",
    "seed_study",
    "stalled_actors",
    "stalled_actors_control",
    "paper_horizon",
    "post_hoc",
    "compute",
)
# The registered runs' first seeds and the peer runs' length: the file states them in its runs' command lines
# (peer.rows: agent=td3_paper seed=2000 run.total_steps=100000; paper_horizon.runs: seed=4000), not under a key
# of their own
REGISTERED_AGENT = "td3_paper"  # every registered td3x run's agent option (SB3's runs record it too)
REGISTERED_PEER_FIRST_SEED = 2000  # peer and bf16: seeds 2000 .. 2000 + n - 1
REGISTERED_PEER_STEPS = 100_000
REGISTERED_HORIZON_FIRST_SEED = 4000  # paper_horizon: seeds 4000 .. 4000 + paper_horizon.seeds - 1


class PreregistrationError(ValueError):
    """A pre-registration file that cannot be read: one line naming the file, the key and what is allowed."""


@dataclass(frozen=True)
class Registration:
    """A parsed pre-registration file.

    Attributes:
        path: the file.
        data: its sections by name (only names of ``FILE_SECTIONS``).
    """

    path: Path
    data: Mapping[str, Any]

    def problem(self, text: str) -> PreregistrationError:
        """The error for ``text``, a problem with this file."""
        return PreregistrationError(f"--preregistration {self.path}: {text}")

    def value(self, dotted: str) -> Any:
        """The value at ``dotted`` (``peer.computed.HalfCheetah-v5.bound``); an error naming the key when the file
        lacks it or holds null there."""
        node: Any = self.data
        for key in dotted.split("."):
            node = node.get(key) if isinstance(node, Mapping) else None
            if node is None:
                raise self.problem(f"has no {dotted}")
        return node

    def mapping(self, dotted: str) -> Mapping[str, Any]:
        """The mapping at ``dotted``; an error naming the key when it is missing or not a mapping."""
        node = self.value(dotted)
        if not isinstance(node, Mapping):
            raise self.problem(f"{dotted} must be a mapping, not {type(node).__name__}")
        return node


def read_registration(path: Path) -> Registration:
    """Parse the pre-registration file at ``path``.

    Raises:
        PreregistrationError: the file is missing or no YAML, not a mapping, or has a section not in
            ``FILE_SECTIONS``.
    """

    def problem(text: str) -> PreregistrationError:
        return PreregistrationError(f"--preregistration {path}: {text}")

    try:
        data = load_yaml(read_text(path, "the pre-registration file (YAML)"))
    except InputFileError as error:
        raise problem(error.problem) from error
    except yaml.YAMLError as error:
        raise problem(yaml_problem(error)) from error
    if not isinstance(data, dict):
        raise problem("not a YAML mapping of sections")
    unknown = sorted(set(map(str, data)) - set(FILE_SECTIONS))
    if unknown:
        raise problem(f"unknown section(s) {unknown}; allowed {sorted(FILE_SECTIONS)}")
    return Registration(path, data)


def window_mean(run: Run, after: int, last: int) -> float:
    """The registered per-seed statistic: one run's mean evaluation return (``return_mean``) over its evaluations at
    env steps s with ``after`` < s <= ``last`` (``after`` = env.random_steps for the peer and bf16 comparisons and the
    seed study; the 10th-last evaluation's predecessor for the paper's horizon). NaN when no evaluation lies there."""
    steps = run.steps
    inside = (steps > after) & (steps <= last)
    return float(run.returns[inside].mean()) if inside.any() else float("nan")
