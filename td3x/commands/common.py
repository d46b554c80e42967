"""What every td3x command line shares: ``--version``, help that shows each option's default, usage errors in
one line, refusals as one line per problem and exit code 2 (:func:`exit_with`), and logging to the terminal and a
file in the dir a command works in (:func:`log_to`).

parser = OneLineParser(prog="td3x-eval", formatter_class=HelpFormatter)
add_version_flag(parser)  # td3x-eval --version prints "td3x 0.1.0"
"""

from __future__ import annotations

import argparse
import functools
import logging
import os
import select
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TypeVar

from td3x import __version__
from td3x.config.command_line import flag_problem, home_expanded

VERSION_LINE = f"td3x {__version__}"


class OneLineParser(argparse.ArgumentParser):
    """Usage errors as one line and exit code 2 (argparse prints its whole usage first); an unknown flag, a prefix
    of an option included, is named with the option meant (``--episode`` -> ``--episodes``) or, where the command
    takes td3x-train's KEY=VALUE overrides (``takes_overrides``, a subcommand's own), the override meant
    (``--total_steps 3000`` -> ``run.total_steps=3000``)."""

    def __init__(self, *args: Any, takes_overrides: bool = False, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)  # a prefix (``--trial`` for ``--trials``) is refused, not guessed
        super().__init__(*args, **kwargs)
        self.takes_overrides = takes_overrides

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        return self._parsed(self.parse_known_args, args, namespace)

    def parse_intermixed_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        return self._parsed(self.parse_known_intermixed_args, args, namespace)

    def _parsed(
        self,
        parse_known: Callable[..., tuple[argparse.Namespace, list[str]]],
        args: Sequence[str] | None,
        namespace: argparse.Namespace | None,
    ) -> argparse.Namespace:
        """What ``parse_known`` makes of the arguments; those it does not know are refused in one line."""
        arguments = list(sys.argv[1:] if args is None else args)
        parsed, unknown = parse_known(arguments, namespace)
        if unknown:
            parser = self._chosen(parsed)
            options = [option for action in parser._actions for option in action.option_strings]
            flags = [argument for argument in unknown if argument.startswith("-")]
            # from the first unknown flag on, as typed: argparse may have taken the value after it as a positional
            problem = flags and flag_problem(arguments[arguments.index(flags[0]) :], options, parser.takes_overrides)
            parser.error(problem or f"unrecognized arguments: {' '.join(unknown)}")
        return parsed

    def _chosen(self, parsed: argparse.Namespace) -> OneLineParser:
        """The (sub)command the arguments chose: this parser, or the subparser of the subcommand named."""
        for action in self._actions:
            if isinstance(action, argparse._SubParsersAction):
                chosen = action.choices.get(str(getattr(parsed, action.dest, "")))
                if isinstance(chosen, OneLineParser):
                    return chosen._chosen(parsed)
        return self


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Appends ``(default: ...)`` to every option's help.

    An option whose default is None (it means "decided later", e.g. "the run's own value") gets no
    ``(default: None)``: its help says in words what the default is.
    """

    def _get_help_string(self, action: argparse.Action) -> str | None:
        if action.default is None:
            return action.help
        return super()._get_help_string(action)


def add_version_flag(parser: argparse.ArgumentParser) -> None:
    """Give a parser ``--version``, which prints ``VERSION_LINE`` and exits 0.

    Args:
        parser: the command's top-level parser.
    """
    parser.add_argument("--version", action="version", version=VERSION_LINE, help="print td3x's version and exit")


class Refused(Exception):
    """What a command refuses once it has read its input, before it evaluates or trains anything: ``problems``
    holds one line each (exit code 2, unless the command says otherwise)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def int_at_least(minimum: int) -> Callable[[str], int]:
    """An option's integer type with a floor: argparse names the option in its one-line refusal."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be an integer >= {minimum}, got {text!r}")
        return value

    return parse


def user_path(text: str) -> Path:
    """A path argument as a shell reads it unquoted: a leading ``~`` is the home dir (``--out=~/r`` or a quoted
    ``"~/runs"`` reaches td3x as typed, and Hydra, pandas and W&B would each read it their own way)."""
    try:
        return Path(home_expanded(text))
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def given_path(text: str) -> Path:
    """A path argument as typed; an empty one (an unset shell variable, ``--out "$DIR"``) is refused, where ``Path``
    would take it for the current directory."""
    if not text:
        raise argparse.ArgumentTypeError("is empty: name a directory")
    return user_path(text)


Params = ParamSpec("Params")
Result = TypeVar("Result")
CLOSED_PIPE_EXIT = 141  # 128 + SIGPIPE: what a shell reports for a Unix tool stopped by a reader that went away


def quiet_on_closed_pipe(main: Callable[Params, Result]) -> Callable[Params, Result]:
    """A console script's ``main`` that exits quietly, with :data:`CLOSED_PIPE_EXIT`, when what reads its stdout
    goes away (``td3x-sweep status DIR | head -1``), as Unix tools do, instead of a BrokenPipeError traceback. A
    broken pipe that is not stdout's is raised as it is."""

    @functools.wraps(main)
    def guarded(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        try:
            try:
                return main(*args, **kwargs)
            finally:  # here, not at exit, where Python would report a closed pipe in its own words
                sys.stdout.flush()
        except BrokenPipeError:
            if not _stdout_reader_gone():
                raise
            # Python flushes stdout again at exit: onto the closed pipe, that is one more error message
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(CLOSED_PIPE_EXIT)

    return guarded


def _stdout_reader_gone() -> bool:
    """Whether stdout is a pipe that nothing reads any more (poll reports an error on its write end)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
    except (AttributeError, OSError, ValueError):  # no poll (Windows), or stdout is no file (replaced, closed)
        return False
    return any(events & select.POLLERR for _, events in poller.poll(0))


def exit_with(label: str, problems: Sequence[str], exit_code: int = 2) -> NoReturn:
    """Print ``label: problem`` on stderr, one line a problem, and exit: every command's refusals
    (``config error``, ``resume error``, ...) look alike. Exit code 2 is a usage or config error."""
    for problem in problems:
        print(f"{label}: {problem}", file=sys.stderr)
    sys.exit(exit_code)


def resume_command(run_dir: Path) -> str:
    """The command that continues the run in ``run_dir``, its path quoted for a shell where it needs it (a sweep job's
    ``agent.hidden_sizes=[32,32]`` would be a glob)."""
    return f"td3x-resume {shlex.quote(str(run_dir))}"


def log_to(log_file: Path) -> None:
    """Log as td3x-train does under Hydra: to the terminal and appended to ``log_file`` (a run's ``train.log``,
    a study's ``tune.log``)."""
    logging.basicConfig(
        level=logging.INFO,
        format="[%(asctime)s][%(name)s][%(levelname)s] - %(message)s",
        handlers=[logging.StreamHandler(), logging.FileHandler(log_file)],
    )
