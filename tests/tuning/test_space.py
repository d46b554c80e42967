"""Search spaces (td3x.tuning.space): every space td3x ships (conf/search/) is accepted with a study's tiny command
line. A bad space refused by td3x-tune, one line and exit 2: tests/commands/test_tune.py."""

from __future__ import annotations

from helpers.runs import TINY_COMMAND_LINE

from td3x.config.hydra import CONF_DIR
from td3x.tuning.space import load_space, space_problems


def test_every_shipped_search_space_is_accepted() -> None:
    for path in sorted((CONF_DIR / "search").glob("*.yaml")):
        assert space_problems(load_space(path.stem), [*TINY_COMMAND_LINE, "run.num_seeds=2"], path.name) == [], path
