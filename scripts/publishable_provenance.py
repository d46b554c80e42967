"""Rewrite run dirs' provenance.json and summary.json to the form td3x writes now, fit to publish.

Runs written by an older td3x recorded the machine's paths and names (the interpreter's absolute path, the
working dir, the host name, the pid, the kernel's build) and not the CPU's instruction-set extensions. This
drops the names, makes paths relative (the command as typed, ``run_dir`` relative to the working dir the run
was started in) and adds ``cpu_flags`` and ``cpu_capability``: those of this machine with ``--this-machine`` (for
runs trained here), else null (not recorded). Files already in the new form are left as they are. A command given
absolute paths as arguments (``hydra.sweep.dir=/scratch/me/sweep``) names the machine's folders too: with
``--started-in DIR``, the working dir the runs were started in, each becomes relative to it (``../sweep``). A
resumed run's earlier sittings (``earlier_sittings``) are rewritten alike.

    python scripts/publishable_provenance.py docs/results/runs
    python scripts/publishable_provenance.py outputs/reference_td3 --this-machine
    python scripts/publishable_provenance.py docs/results/peer/runs --started-in /scratch/me/td3x
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import torch

from td3x.commands.common import OneLineParser
from td3x.host.provenance import command_as_typed, cpu_flags
from td3x.rundir.layout import PROVENANCE_FILE, SUMMARY_FILE, write_json_atomic

LEAKY = ("hostname", "cwd", "pid", "platform")


def os_of_platform(text: str) -> str:
    """``Linux-6.18.44-fc-v769-x86_64-with-glibc2.36`` -> ``Linux x86_64 glibc 2.36`` (no kernel build)."""
    match = re.fullmatch(r"(\w+)-.*?-(x86_64|aarch64|arm64)-with-(glibc|musl)(\S+)", text)
    return " ".join(match.group(1, 2, 3, 4)) if match else text.split("-")[0]


def relative_argument(argument: str, started_in: Path) -> str:
    """An argument naming an absolute path, alone or as an override's value, with the path relative to the working
    dir the command was started in; any other argument as it is."""
    key, equals, value = argument.rpartition("=")
    if value.startswith("/"):
        return f"{key}{equals}{os.path.relpath(value, started_in)}"
    return argument


def publishable_provenance(
    old: dict[str, Any], this_machine: dict[str, Any] | None, started_in: Path | None = None
) -> dict[str, Any]:
    command = list(old["command"])
    if command and Path(command[0]).name.startswith("python") and len(command) > 1:
        command = command[1:]  # the interpreter's path: `python` was not part of the command as typed
    cwd = old.get("cwd")
    if cwd and command and Path(command[0]).is_absolute() and Path(command[0]).is_relative_to(cwd):
        command[0] = str(Path(command[0]).relative_to(cwd))
    new = {key: value for key, value in old.items() if key not in LEAKY}
    new["command"] = command_as_typed(command)
    if started_in is not None:
        new["command"] = [new["command"][0], *(relative_argument(arg, started_in) for arg in new["command"][1:])]
    new.setdefault("cpu_flags", (this_machine or {}).get("cpu_flags"))
    new.setdefault("cpu_capability", (this_machine or {}).get("cpu_capability"))
    if "platform" in old:
        new["os"] = os_of_platform(old["platform"])
    if "earlier_sittings" in old:  # a resumed run's earlier records (td3x.host.provenance): each published alike
        new["earlier_sittings"] = [
            publishable_provenance(sitting, this_machine, started_in) for sitting in old["earlier_sittings"]
        ]
    return new


def publishable_summary(old: dict[str, Any], cwd: str | None) -> dict[str, Any]:
    run_dir = old.get("run_dir")
    if run_dir and Path(run_dir).is_absolute():
        path = Path(run_dir)
        old = {**old, "run_dir": str(path.relative_to(cwd)) if cwd and path.is_relative_to(cwd) else path.name}
    return old


def rewrite(run_dir: Path, this_machine: dict[str, Any] | None, started_in: Path | None = None) -> bool:
    """Rewrite one run's two files; whether anything changed."""
    provenance_path, summary_path = run_dir / PROVENANCE_FILE, run_dir / SUMMARY_FILE
    provenance = json.loads(provenance_path.read_text())
    new_provenance = publishable_provenance(provenance, this_machine, started_in)
    changed = new_provenance != provenance
    if changed:
        write_json_atomic(provenance_path, new_provenance)
    if summary_path.is_file():
        summary = json.loads(summary_path.read_text())
        new_summary = publishable_summary(summary, provenance.get("cwd"))
        if new_summary != summary:
            write_json_atomic(summary_path, new_summary)
            changed = True
    return changed


def main() -> None:
    parser = OneLineParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, help="folders holding run dirs (searched below)")
    parser.add_argument("--this-machine", action="store_true", help="record this machine's CPU flags and capability")
    parser.add_argument(
        "--started-in",
        type=Path,
        metavar="DIR",
        help="the absolute working dir the runs were started in: their commands' absolute paths become relative to it",
    )
    args = parser.parse_args()
    this_machine = None
    if args.this_machine:
        this_machine = {"cpu_flags": cpu_flags(), "cpu_capability": torch.backends.cpu.get_cpu_capability()}
    missing = [str(folder) for folder in args.folders if not folder.is_dir()]
    if missing:
        sys.exit(f"publishable_provenance: not a folder: {', '.join(missing)}")
    if args.started_in is not None and not args.started_in.is_absolute():
        sys.exit(f"publishable_provenance: --started-in must be an absolute path, not {args.started_in}")
    run_dirs = sorted({path.parent for folder in args.folders for path in folder.rglob(PROVENANCE_FILE)})
    changed = sum(rewrite(run_dir, this_machine, args.started_in) for run_dir in run_dirs)
    print(f"{changed} of {len(run_dirs)} run dirs rewritten")


if __name__ == "__main__":
    main()
