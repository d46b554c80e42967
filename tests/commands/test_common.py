"""What every td3x command line shares (td3x.commands.common): help that gives each option's default, and --version,
from each main and from each installed console script."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from importlib import metadata

import pytest
from helpers.scripts import exit_code

import td3x
from td3x import __version__
from td3x.commands import report as report_cli
from td3x.commands.common import VERSION_LINE
from td3x.commands.eval import build_parser as eval_parser
from td3x.commands.eval import main as eval_main
from td3x.commands.sweep import build_parser as sweep_parser
from td3x.commands.sweep import main as sweep_main

MAINS: dict[str, Callable[[list[str]], int | None]] = {
    "td3x-report": report_cli.main,
    "td3x-eval": eval_main,
    "td3x-sweep": sweep_main,
}


def parsers_of(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """A parser and its subcommands' parsers."""
    subparsers = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [parser, *(sub for action in subparsers for sub in action.choices.values())]


# ---------------------------------------------------------------------------------------------------- help, version
@pytest.mark.parametrize("build", [report_cli.build_parser, eval_parser, sweep_parser], ids=list(MAINS))
def test_every_argument_has_help_that_gives_its_default(build: Callable[[], argparse.ArgumentParser]) -> None:
    for parser in parsers_of(build()):
        formatter = parser._get_formatter()
        for action in parser._actions:
            if isinstance(action, argparse._HelpAction | argparse._VersionAction | argparse._SubParsersAction):
                continue
            assert action.help, f"{parser.prog} {action.dest} has no help"
            if not action.required:  # a required argument has no default to show
                assert "default" in str(formatter._get_help_string(action)), f"{parser.prog} {action.dest}"
        parser.format_help()  # every %(default)s expands


@pytest.mark.parametrize("prog", list(MAINS))
def test_version_prints_td3x_and_its_version(prog: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(MAINS[prog], ["--version"]) == 0
    assert capsys.readouterr().out == f"td3x {__version__}\n" == VERSION_LINE + "\n"


@pytest.mark.parametrize("script", ["td3x-train", "td3x-resume", "td3x-sweep", "td3x-eval", "td3x-report"])
def test_every_cli_prints_td3x_version(
    script: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each installed console script's own entry point, called as the script calls it (argv from sys.argv)."""
    (entry_point,) = metadata.entry_points(group="console_scripts", name=script)
    monkeypatch.setattr(sys, "argv", [script, "--version"])
    try:
        entry_point.load()()
    except SystemExit as exit_:  # argparse's version action exits 0
        assert not exit_.code
    assert capsys.readouterr().out.strip() == f"td3x {td3x.__version__}"
