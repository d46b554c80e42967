"""td3x-sweep list's own copies of Hydra 1.3's multirun rules (td3x.config.overrides) against Hydra's: the jobs of a
sweep and their order, the ``+``/``++``/``~`` overrides, the dir name; and the dirs and configs of a real
multirun. Only this file imports ``hydra._internal``, to compare with the real thing; td3x never does."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hydra import initialize_config_dir
from hydra._internal.config_loader_impl import ConfigLoaderImpl, get_overrides_dirname
from hydra._internal.core_plugins.basic_sweeper import BasicSweeper
from hydra.core.global_hydra import GlobalHydra
from hydra.core.override_parser.overrides_parser import OverridesParser
from hydra.errors import HydraException
from omegaconf import DictConfig, OmegaConf

import td3x
from td3x.commands.train import HYDRA_OPTIONS
from td3x.config.hydra import CONF_DIR, register_configs
from td3x.config.overrides import apply_overrides, override_dirname, sweep_jobs
from td3x.sweeps.multirun import JobComposer, job_overrides, list_jobs


@pytest.fixture(scope="module")
def parser() -> Iterator[OverridesParser]:
    """Hydra's parser with the config loader of conf/, so that glob() lists a group's options."""
    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        yield OverridesParser.create(config_loader=GlobalHydra.instance().config_loader())


def test_td3x_train_knows_hydra_s_options() -> None:
    from hydra._internal.utils import get_args_parser

    assert sorted(HYDRA_OPTIONS) == sorted(get_args_parser()._option_string_actions)


def test_no_td3x_module_imports_hydra_internal() -> None:
    package = Path(td3x.__file__).parent
    offenders = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            offenders += [f"{path.relative_to(package)}: {name}" for name in names if "hydra._internal" in name]
    assert offenders == []


# ---------------------------------------------------------------------- the jobs of a sweep, in Hydra's order
SWEEPS = [
    [],
    ["agent.tau=0.01"],
    ["env=hopper,walker2d", "seed=range(0,3)", "agent.tau=0.01"],
    ["ablation=glob(ahe*)", "seed=choice(1,2)"],
    ["ablation=glob([ahe*,no_*],exclude=no_twin)", "env=hopper"],
    ["logging.tags='a,b',c", "+env.kwargs.x=1,2"],  # a quoted value with a comma is one value
    ["seed=0,1", "env=hopper", "seed=5,6,7"],  # a key again: its first place, its last values
    ["seed=1", "+seed=2", "++seed=3", "~seed"],  # other prefixes: other keys
    ["agent.tau=range(0.1,0.3,0.1)", "seed=range(3,0,-1)", "run.total_steps=range(5)"],
    ["agent.hidden_sizes=choice([32,32],[64,64])", "env.kwargs={a:1,b:[2,3]}", "seed=sort(3,1,2)"],
    ["run.num_seeds=${run.num_seeds}", "seed=tag(a,b,choice(0,1))", "logging.group=null", "logging.project=''"],
    ["env=hopper,walker2d", "ablation=none,ahe", "seed=0,10", "run.num_seeds=10", "hydra.sweep.dir=/tmp/x"],
]


@pytest.mark.parametrize("lines", SWEEPS, ids=" ".join)
def test_sweep_jobs_are_hydras_basic_sweeper_jobs_in_its_order(parser: OverridesParser, lines: list[str]) -> None:
    overrides = parser.parse_overrides(lines)
    (hydras,) = BasicSweeper.split_arguments(overrides, max_batch_size=None)
    assert sweep_jobs(overrides) == hydras


def test_the_product_varies_the_first_override_slowest(parser: OverridesParser) -> None:
    jobs = sweep_jobs(parser.parse_overrides(["env=hopper,ant", "seed=range(2)", "ablation=glob(ahe_t*)"]))
    assert jobs == [[f"env={env}", f"seed={seed}", "ablation=ahe_twin"] for env in ("hopper", "ant") for seed in (0, 1)]


def test_an_interval_sweep_is_refused_as_hydra_refuses_it(parser: OverridesParser) -> None:
    overrides = parser.parse_overrides(["agent.tau=interval(0,1)"])
    with pytest.raises(HydraException) as hydras:
        BasicSweeper.split_arguments(overrides, max_batch_size=None)
    with pytest.raises(HydraException) as ours:
        sweep_jobs(overrides)
    assert str(ours.value) == str(hydras.value)


def test_td3x_sweep_list_expands_glob_sweeps() -> None:
    """Hydra's parser needs a config loader for glob(): td3x-sweep list gives it one."""
    jobs = list_jobs(["ablation=glob(ahe_*)", "seed=0,1"])
    assert [job.run_dir.parts[-3:] for job in jobs] == [
        ("pendulum", row, f"seed={seed}") for row in ("ahe_delay", "ahe_smoothing", "ahe_twin") for seed in (0, 1)
    ]


# ---------------------------------------------------------------------- the dir name
DIRNAME_OVERRIDES = [
    [],
    ["seed=1"],
    ["seed=1", "agent.tau=0.01", "+env.kwargs.a=2", "env=hopper", "run.num_seeds=10"],
    ["~paper_row", "++seed=3", "+experiment=table2", "logging.group=x", "run.log_every=100"],
    ["+env.kwargs.tag='x,y'", "+env.kwargs.eq='a=b'", "agent.hidden_sizes=[64,64]", "env.kwargs={a:1}"],
    ["Seed=1", "seed=1", "a.b=1", "a=1", "a_b=1", "+a=0"],  # sorted as text: case, '.', '_' and '+' decide
    ["ablation@foo=ahe", "hydra/launcher=joblib", "run.resume=never", "run.keep_buffer=true"],
]
EXCLUDES = [
    [],
    ["env", "ablation", "experiment", "seed", "logging.group", "run.log_every"],
    list(OmegaConf.load(CONF_DIR / "train.yaml").hydra.job.config.override_dirname.exclude_keys),
]
SEPARATORS = [(",", "="), ("/", "_"), ("__", ":"), ("", "")]


@pytest.mark.parametrize("lines", DIRNAME_OVERRIDES, ids=" ".join)
@pytest.mark.parametrize("exclude_keys", EXCLUDES, ids=["no excludes", "a few", "train.yaml's"])
@pytest.mark.parametrize(("item_sep", "kv_sep"), SEPARATORS)
def test_override_dirname_is_hydras(lines: list[str], exclude_keys: list[str], item_sep: str, kv_sep: str) -> None:
    overrides = OverridesParser.create().parse_overrides(lines)
    hydras = get_overrides_dirname(overrides, exclude_keys, item_sep, kv_sep)
    assert override_dirname(overrides, exclude_keys, item_sep, kv_sep) == hydras


# ---------------------------------------------------------------------- + ++ ~ and plain overrides
@dataclass
class Typed:
    i: int = 1
    f: float = 0.5
    tags: list[str] = field(default_factory=list)


def base_config() -> DictConfig:
    cfg = OmegaConf.create(
        {"a": 1, "b": {"c": 2, "d": [1, 2], "e": {"f": 3}}, "n": None, "s": "text", "l": [1, {"x": 1}]}
    )
    cfg.t = OmegaConf.structured(Typed)
    OmegaConf.set_struct(cfg, True)  # as Hydra's composed config
    return cfg


APPLIED = [
    ["a=5", "b.c=7", "b.d=[3]", "s=other", "l.1.x=2", "t.i=3", "t.tags=[x,y]"],
    ["+z=1", "+b.g=2", "+b.e={g:4}", "+b.d=[9]", "+n=3"],  # add new, merge a dict, replace a list, fill a null
    ["++a=9", "++b.e.f=8", "++y.w=1", "++b={z:1}"],
    ["~a", "~b.e.f", "~b.c=2", "~l"],
    ["~t.f"],  # refused by OmegaConf: a field of a typed node
    ["b.d=abc", "b=1"],  # untyped: anything goes
    ["b={c:9,h:1}"],  # refused: h is not in b
    ["+a=2"],  # refused: a is there
    ["+s=x", "a=1"],  # refused at the first
    ["z=1"],  # refused: no key z to change
    ["~z"],  # refused: nothing to delete
    ["~n"],  # refused: a null counts as absent
    ["~b.c=5"],  # refused: b.c is 2
    ["~l.1"],  # a list item: Hydra's own error
    ["a.b=1"],  # refused: a is not a node
    ["b@pkg=1"],  # refused: a package on a value key
    ["+b.d={a:1}"],  # refused by OmegaConf: a dict into a list
    ["t.i=abc"],  # refused by OmegaConf: not an int
    ["+t.j=1"],  # + adds a key even to a typed node
]


@pytest.mark.parametrize("lines", APPLIED, ids=" ".join)
def test_apply_overrides_changes_the_config_as_hydra_does(lines: list[str]) -> None:
    overrides = OverridesParser.create().parse_overrides(lines)
    outcomes = []
    for apply in (ConfigLoaderImpl._apply_overrides_to_config, lambda o, c: apply_overrides(c, o)):
        cfg = base_config()
        try:
            apply(overrides, cfg)
            outcomes.append(OmegaConf.to_yaml(cfg))
        except Exception as error:  # the same error, whatever its type
            outcomes.append(f"{type(error).__name__}: {error}")
    assert outcomes[1] == outcomes[0]


# ---------------------------------------------------------------------- a real multirun (Hydra's own sweeper)
RECORDER = """
import json, os
import hydra
from hydra.core.hydra_config import HydraConfig
from omegaconf import OmegaConf
from td3x.config.hydra import CONF_DIR, register_configs

@hydra.main(version_base="1.3", config_path=str(CONF_DIR), config_name="train")
def record(cfg):
    job = {"dir": HydraConfig.get().runtime.output_dir, "config": OmegaConf.to_yaml(cfg)}
    with open(os.environ["TD3X_RECORD"], "a") as file:
        file.write(json.dumps(job) + "\\n")

register_configs()
record()
"""
GUARDED = [
    "ablation=glob(ahe_*)",
    "seed=range(0,4,2)",
    "+env.kwargs.tag='x,y',z",
    "++run.eval_episodes=3",
    "~paper_row",
    "agent.tau=0.01",
    "run.keep_buffer=true",  # inert: left out of the dir name
    "logging.video_every=1000",
]


@pytest.mark.slow  # composes 12 jobs twice
def test_listed_jobs_are_a_real_multiruns_dirs_and_configs(tmp_path: Path) -> None:
    """Hydra's own multirun, with a task that only records each job's dir and config: td3x-sweep list names the
    same dirs, in launch order, and composes the same configs."""
    script, record = tmp_path / "record.py", tmp_path / "jobs.jsonl"
    script.write_text(RECORDER)
    arguments = [*GUARDED, f"hydra.sweep.dir={tmp_path / 'sweep'}"]
    environment = {**os.environ, "TD3X_RECORD": str(record)}
    result = subprocess.run(
        [sys.executable, str(script), "-m", *arguments], cwd=tmp_path, env=environment, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-3000:]
    launched = [json.loads(line) for line in record.read_text().splitlines()]

    register_configs()
    GlobalHydra.instance().clear()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        composer = JobComposer()
        listed = [composer.configs(job) for job in job_overrides(arguments)]
    assert len(listed) == len(launched) == 12
    assert [str(run_dir) for run_dir, _ in listed] == [job["dir"] for job in launched]
    assert [OmegaConf.to_yaml(task) for _, task in listed] == [job["config"] for job in launched]
    # the sweeper writes each value as parsed: ~paper_row=null, run.keep_buffer=True (inert: not in the name)
    assert [Path(job["dir"]).name for job in launched[:2]] == [
        f"++run.eval_episodes=3,+env.kwargs.tag={tag},agent.tau=0.01,seed=0,~paper_row=null" for tag in ("'x,y'", "z")
    ]
