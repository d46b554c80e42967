"""Read back what an offline wandb run wrote to disk, so tests can assert on real wandb files without mocks (and
lay out an empty segment dir, :func:`segment`, where only its name matters).

An offline run (``wandb.init(mode="offline", dir=D)``) writes
``D/wandb/offline-run-<YYYYmmdd_HHMMSS>-<id>/run-<id>.wandb`` and, in offline mode, no ``config.yaml`` or
``wandb-summary.json``. wandb 0.31 no longer ships a Python reader for that file, so this module decodes it:

* a 7-byte file header: ``b":W&B"``, the magic ``0xBEE1`` (2 bytes, little-endian) and a version byte (0);
* then LevelDB-log framing in 32 KiB blocks (the file header counts towards the first block). Each chunk has a
  7-byte header ``crc32(4, LE) | length(2, LE) | type(1)`` with type 1 = FULL, 2 = FIRST, 3 = MIDDLE, 4 = LAST; the
  crc is ``zlib.crc32(type_byte + data)``. Fewer than 7 bytes left in a block are zero padding;
* each reassembled payload is a serialized ``wandb.proto.wandb_internal_pb2.Record``.

Layout seen with wandb 0.31 (offline): the ``run`` record carries project/group/job_type/name/tags and the initial
config as *plain* JSON values (``{"tau": 0.005}``, not ``{"value": ...}``-wrapped; that wrapping only exists in
``config.yaml``), plus an internal ``_wandb`` key that is dropped here. Later ``run.config`` changes come as
``config`` records. History and summary items name their key with ``nested_key`` (a nested dict logged as
``{"nest": {"a": 1}}`` gives ``["nest", "a"]``), which is joined with ``"/"`` here.
"""

from __future__ import annotations

import json
import struct
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from google.protobuf.json_format import MessageToDict
from wandb.proto import wandb_internal_pb2

__all__ = ["WandbRun", "find_run_files", "read_records", "read_run", "read_segments", "segment"]

_IDENT = b":W&B"
_MAGIC = 0xBEE1
_VERSION = 0
_FILE_HEADER = struct.Struct("<4sHB")  # 7 bytes
_CHUNK_HEADER = struct.Struct("<IHB")  # crc32, length, type: 7 bytes
_BLOCK_SIZE = 32 * 1024
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4

# Config keys wandb adds for its own bookkeeping; not part of what the user passed as ``config``.
_INTERNAL_CONFIG_KEYS = frozenset({"_wandb"})


@dataclass
class WandbRun:
    """Everything a test may want to assert about one offline wandb run, folded from its records."""

    run_id: str = ""
    project: str = ""
    group: str = ""
    job_type: str = ""
    name: str = ""
    """The run's display name."""
    tags: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    """Top-level config key -> JSON-decoded value (nested dicts stay nested); wandb's ``_wandb`` key is dropped."""
    history: list[dict[str, Any]] = field(default_factory=list)
    """One dict per ``run.log`` row (history record): key -> JSON-decoded value, incl. ``_step``/``_runtime``/...."""
    summary: dict[str, Any] = field(default_factory=dict)
    """Last value of every summary key (nested keys joined with ``"/"``), incl. wandb's own ``_step``/``_runtime``."""
    metrics: list[dict[str, Any]] = field(default_factory=list)
    """``define_metric`` records via ``MessageToDict`` (snake_case: ``name``, ``glob_name``, ``step_metric``...)."""
    exit_code: int | None = None
    """The exit code from the ``exit`` record (``0`` after a clean ``run.finish()``); ``None`` if there is none."""


def find_run_files(run_dir: Path) -> list[Path]:
    """All ``run-*.wandb`` files of offline runs under ``run_dir/wandb/offline-run-*/``, sorted by path."""
    return sorted(Path(run_dir).glob("wandb/offline-run-*/run-*.wandb"))


def _check_file_header(data: bytes, path: Path) -> None:
    if len(data) < _FILE_HEADER.size:
        raise ValueError(f"{path}: too short for a wandb file header ({len(data)} bytes)")
    ident, magic, version = _FILE_HEADER.unpack_from(data, 0)
    if ident != _IDENT or magic != _MAGIC:
        raise ValueError(f"{path}: not a wandb file (header {data[: _FILE_HEADER.size]!r})")
    if version != _VERSION:
        raise ValueError(f"{path}: unsupported wandb file version {version}")


def _iter_chunks(data: bytes, path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(type, data)`` for each LevelDB-log chunk after the file header, checking its crc."""
    pos = _FILE_HEADER.size
    while pos < len(data):
        left_in_block = _BLOCK_SIZE - pos % _BLOCK_SIZE
        if left_in_block < _CHUNK_HEADER.size:  # trailer padding of a block
            pos += left_in_block
            continue
        if len(data) - pos < _CHUNK_HEADER.size:
            raise ValueError(f"{path}: truncated chunk header at offset {pos}")
        crc, length, chunk_type = _CHUNK_HEADER.unpack_from(data, pos)
        if chunk_type == 0 and length == 0 and crc == 0:  # zero-filled (preallocated) tail: no more records
            return
        start = pos + _CHUNK_HEADER.size
        payload = data[start : start + length]
        if len(payload) != length:
            raise ValueError(f"{path}: truncated chunk at offset {pos} (wanted {length} bytes, got {len(payload)})")
        if zlib.crc32(bytes([chunk_type]) + payload) != crc:
            raise ValueError(f"{path}: crc mismatch in chunk at offset {pos}")
        yield chunk_type, payload
        pos = start + length


def _iter_payloads(data: bytes, path: Path) -> Iterator[bytes]:
    """Reassemble FULL / FIRST+MIDDLE*+LAST chunks into record payloads."""
    pending: list[bytes] | None = None
    for chunk_type, payload in _iter_chunks(data, path):
        if chunk_type == _FULL and pending is None:
            yield payload
        elif chunk_type == _FIRST and pending is None:
            pending = [payload]
        elif chunk_type == _MIDDLE and pending is not None:
            pending.append(payload)
        elif chunk_type == _LAST and pending is not None:
            yield b"".join([*pending, payload])
            pending = None
        else:
            state = "inside" if pending is not None else "outside"
            raise ValueError(f"{path}: unexpected chunk type {chunk_type} {state} a fragmented record")
    if pending is not None:
        raise ValueError(f"{path}: file ends inside a fragmented record")


def read_records(path: Path) -> list[Any]:
    """Parse a ``.wandb`` file into its ``wandb_internal_pb2.Record`` protos, in file order.

    Raises ``ValueError`` on a bad file header, a crc mismatch, or a truncated/garbled record.
    """
    path = Path(path)
    data = path.read_bytes()
    _check_file_header(data, path)
    records = []
    for payload in _iter_payloads(data, path):
        record = wandb_internal_pb2.Record()
        record.ParseFromString(payload)
        records.append(record)
    return records


def _item_key(item: Any) -> str:
    """The key of a config/summary/history item: ``key``, or its ``nested_key`` parts joined with ``"/"``."""
    return item.key if item.key else "/".join(item.nested_key)


def _history_value(item: Any) -> Any:
    if item.value_json:
        return json.loads(item.value_json)
    kind = item.WhichOneof("value")
    if kind is None or kind == "none":
        return None
    if kind == "json":
        return json.loads(item.json)
    return getattr(item, kind)


def _set_nested(target: dict[str, Any], keys: list[str], value: Any) -> None:
    for key in keys[:-1]:
        child = target.get(key)
        if not isinstance(child, dict):
            child = target[key] = {}
        target = child
    target[keys[-1]] = value


def _pop_nested(target: dict[str, Any], keys: list[str]) -> None:
    for key in keys[:-1]:
        child = target.get(key)
        if not isinstance(child, dict):
            return
        target = child
    target.pop(keys[-1], None)


def _apply_config(run: WandbRun, config: Any) -> None:
    for item in config.update:
        keys = [item.key] if item.key else list(item.nested_key)
        if keys[0] not in _INTERNAL_CONFIG_KEYS:
            _set_nested(run.config, keys, json.loads(item.value_json))
    for item in config.remove:
        _pop_nested(run.config, [item.key] if item.key else list(item.nested_key))


def _fold_run(run: WandbRun, rec: Any) -> None:
    run.run_id = rec.run_id
    run.project = rec.project
    run.group = rec.run_group
    run.job_type = rec.job_type
    run.name = rec.display_name
    run.tags = list(rec.tags)
    _apply_config(run, rec.config)
    for item in rec.summary.update:
        run.summary[_item_key(item)] = json.loads(item.value_json)


def _fold_history(run: WandbRun, rec: Any) -> None:
    row = {_item_key(item): _history_value(item) for item in rec.item}
    if "_step" not in row and rec.HasField("step"):
        row["_step"] = rec.step.num
    run.history.append(row)


def _fold_summary(run: WandbRun, rec: Any) -> None:
    for item in rec.update:
        run.summary[_item_key(item)] = json.loads(item.value_json)
    for item in rec.remove:
        run.summary.pop(_item_key(item), None)


def _fold_metric(run: WandbRun, rec: Any) -> None:
    run.metrics.append(MessageToDict(rec, preserving_proto_field_name=True))


def _fold_exit(run: WandbRun, rec: Any) -> None:
    run.exit_code = rec.exit_code


_FOLDERS: dict[str, Callable[[WandbRun, Any], None]] = {
    "run": _fold_run,
    "config": _apply_config,
    "history": _fold_history,
    "summary": _fold_summary,
    "metric": _fold_metric,
    "exit": _fold_exit,
}


def read_run(path: Path) -> WandbRun:
    """Read a ``run-<id>.wandb`` file and fold its records into a :class:`WandbRun`."""
    run = WandbRun()
    for record in read_records(path):
        kind = record.WhichOneof("record_type")
        folder = _FOLDERS.get(kind) if kind is not None else None
        if folder is not None:
            folder(run, getattr(record, kind))
    return run


def read_segments(run_dir: Path) -> list[WandbRun]:
    """Each offline segment of the W&B runs in ``run_dir/wandb`` (a resumed run writes one per process), in the
    order they started (their dirs are named ``offline-run-<YYYYmmdd_HHMMSS>-<id>``)."""
    files = sorted(find_run_files(run_dir), key=lambda path: path.parent.name.removeprefix("offline-run-"))
    return [read_run(path) for path in files]


def segment(run_dir: Path, name: str) -> Path:
    """A segment dir as W&B names it, with an empty log: ``run_dir/wandb/offline-run-<time>-<id>/run-<id>.wandb``
    (what td3x looks for to find a run's W&B run, without its records)."""
    path = run_dir / "wandb" / name
    path.mkdir(parents=True)
    (path / f"run-{name.rsplit('-', 1)[1]}.wandb").write_bytes(b"")
    return path
