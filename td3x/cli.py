"""What every td3x command line shares: ``--version`` and help that shows each option's default.

parser = argparse.ArgumentParser(prog="td3x-eval", formatter_class=HelpFormatter)
add_version_flag(parser)  # td3x-eval --version prints "td3x 0.1.0"
"""

from __future__ import annotations

import argparse

from td3x import __version__

VERSION_LINE = f"td3x {__version__}"


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
