"""Where a bag's messages are: its storage files in reading order, and what metadata.yaml says about them.

rosbag2 bags come as a folder (metadata.yaml + one or more storage files, split files numbered `_0`, `_1`
...), a folder whose metadata.yaml was never written (recorder killed), or a bare .mcap/.db3 file.
metadata.yaml is read here by its own keys (versions 1 to 9) and only as a description: the storage
files are what is read (see reader.py), so a metadata.yaml that disagrees with them drops nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path, PurePath

import yaml

from lerobot_ros.bag.errors import BagError

STORAGE_SUFFIXES = (".mcap", ".db3")
SUPPORTED_VERSIONS = range(1, 10)  # rosbag2 metadata versions 1 (Dashing) .. 9 (Jazzy and later)


@dataclass(frozen=True)
class MetadataTopic:
    """One entry of metadata.yaml's topics_with_message_count; the QoS text is kept for reports only."""

    name: str
    msgtype: str
    count: int
    qos_text: str = ""


@dataclass
class BagLayout:
    """A bag's storage files in reading order plus metadata.yaml's description (None without one)."""

    path: Path
    files: list[Path]
    storage: str  # "mcap" | "sqlite3"
    version: int | None = None
    compression_mode: str | None = None  # None | "file" | "message"
    custom_data: dict[str, str] = field(default_factory=dict)
    ros_distro: str | None = None
    topics: dict[str, MetadataTopic] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def has_metadata(self) -> bool:
        return self.version is not None


def numeric_order(paths) -> list[Path]:
    """Paths ordered by their numbers as numbers (`bag_2` before `bag_10`), as rosbag2 numbers split files."""

    def key(p: Path):
        return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", p.name)]

    return sorted(paths, key=key)


def storage_files(folder: Path) -> list[Path]:
    """The storage files (.mcap, .db3, and their file-compressed .zstd forms) directly in `folder`."""
    return numeric_order(
        p
        for p in folder.iterdir()
        if not p.is_dir()
        and (p.suffix in STORAGE_SUFFIXES or (p.suffix == ".zstd" and Path(p.stem).suffix in STORAGE_SUFFIXES))
    )


def is_bag(path: Path) -> bool:
    """A storage file, or a folder holding metadata.yaml or storage files."""
    if path.exists() and not path.is_dir():
        return path.suffix in STORAGE_SUFFIXES
    return path.is_dir() and ((path / "metadata.yaml").is_file() or bool(storage_files(path)))


def _storage_of(files: list[Path]) -> str:
    suffixes = {(Path(p.stem) if p.suffix == ".zstd" else p).suffix for p in files}
    return "sqlite3" if suffixes == {".db3"} else "mcap"


def resolve(path) -> BagLayout:
    """The layout of the bag at `path`; BagError for a missing path, an unsupported version or missing files."""
    path = Path(path)
    if not path.exists():
        raise BagError(path, "does not exist")
    if path.is_file():
        if path.suffix not in STORAGE_SUFFIXES:
            raise BagError(path, f"is not a rosbag2 storage file (expected {' or '.join(STORAGE_SUFFIXES)})")
        return BagLayout(path, [path], _storage_of([path]))
    meta = path / "metadata.yaml"
    if not meta.is_file():
        files = storage_files(path)
        if not files:
            raise BagError(path, "holds no metadata.yaml and no .mcap/.db3 file: not a bag")
        layout = BagLayout(path, files, _storage_of(files))
        if len(files) > 1:
            layout.notes.append(
                f"no metadata.yaml: read its {len(files)} storage files in numeric order ({files[0].name} .. {files[-1].name})"
            )
        return layout
    return _from_metadata(path, meta)


def _from_metadata(path: Path, meta: Path) -> BagLayout:
    try:
        doc = yaml.safe_load(meta.read_text()) or {}
        info = doc["rosbag2_bagfile_information"]
    except yaml.YAMLError as exc:
        raise BagError(meta, f"is not valid YAML ({' '.join(str(exc).split())[:160]})") from None
    except (KeyError, TypeError):
        raise BagError(meta, "has no rosbag2_bagfile_information: not a rosbag2 metadata file") from None
    version = info.get("version")
    if not isinstance(version, int) or version not in SUPPORTED_VERSIONS:
        raise BagError(
            meta,
            f"rosbag2 format version {version!r} is not supported (this reader reads versions "
            f"{SUPPORTED_VERSIONS.start} to {SUPPORTED_VERSIONS.stop - 1})",
        )
    storage = info.get("storage_identifier") or ""
    if storage not in ("mcap", "sqlite3"):
        raise BagError(meta, f"storage plugin {storage!r} is not supported (mcap or sqlite3)")
    mode: str | None = str(info.get("compression_mode") or "").lower()
    mode = None if mode in ("", "none") else mode
    if mode is not None and (info.get("compression_format") or "") != "zstd":
        raise BagError(meta, f"compression format {info.get('compression_format')!r} is not supported (zstd only)")
    # versions 1-3 stored paths relative to the bag's parent folder: the file name is what counts
    listed = [path / PurePath(str(p)).name for p in info.get("relative_file_paths") or []]
    missing = [p.name for p in listed if not p.is_file()]
    if missing:
        raise BagError(path, f"metadata.yaml lists storage files that are missing: {', '.join(missing)}")
    extra = [p for p in storage_files(path) if p not in listed]
    layout = BagLayout(
        path, listed + extra, storage, version, mode, dict(info.get("custom_data") or {}), info.get("ros_distro")
    )
    if extra:
        layout.notes.append(
            f"storage files not listed in metadata.yaml read after the listed ones: {', '.join(p.name for p in extra)}"
        )
    if not layout.files:
        raise BagError(path, "metadata.yaml lists no storage file and the folder holds none")
    for entry in info.get("topics_with_message_count") or []:
        tm = entry.get("topic_metadata") or {}
        qos = tm.get("offered_qos_profiles", "")
        name = str(tm.get("name", ""))
        layout.topics[name] = MetadataTopic(
            name,
            str(tm.get("type", "")),
            int(entry.get("message_count") or 0),
            qos if isinstance(qos, str) else yaml.safe_dump(qos),
        )
    return layout


def find_bags(paths) -> list[Path]:
    """Bags among `paths`: a bag itself, or every bag found below a folder that is not one (at any depth,
    in numeric order; hidden folders skipped). A folder of storage files without metadata.yaml is one
    (split) bag unless it also holds bag folders; then each loose storage file is a bag of its own.
    A missing path is kept, to be reported like any bad bag."""
    out: list[Path] = []
    for arg in paths:
        path = Path(arg)
        if not path.is_dir() or _is_bag_folder(path):
            out.append(path)
            continue
        out.extend(_bags_below(path) or [path])
    return out


def _subfolders(folder: Path) -> list[Path]:
    return [c for c in folder.iterdir() if c.is_dir() and not c.name.startswith(".")]


def _is_bag_folder(folder: Path) -> bool:
    if (folder / "metadata.yaml").is_file():
        return True
    return bool(storage_files(folder)) and not any(is_bag(c) or _bags_below(c) for c in _subfolders(folder))


def _bags_below(folder: Path) -> list[Path]:
    found: list[Path] = []
    for child in numeric_order(c for c in folder.iterdir() if not c.name.startswith(".")):
        if not child.is_dir():  # a file, or a stream such as a FIFO
            if child in storage_files(folder):
                found.append(child)
        elif _is_bag_folder(child):
            found.append(child)
        else:
            found.extend(_bags_below(child))
    return found
