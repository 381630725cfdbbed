"""Bundles: export a data dir built from real exports, import it elsewhere, answers and replay identical; any changed
byte, unsafe member or occupied target refused whole, the target left empty."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import shutil
import tarfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from frozen_search.cache.bundle import (
    FORMAT,
    GZIP_HEADER,
    Manifest,
    file_sha256,
)
from frozen_search.cache.http_cache import HttpCache
from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.errors import BundleInvalid, ConfigError, FrozenSearchError, StoreIntegrityError
from frozen_search.ops.bundles import export_bundle, import_bundle
from frozen_search.store import SCHEMA_VERSION
from tests.conftest import MRR, PEAR_2002, PEAR_2014, PYRUS, build_data_dir, make_service

CUTOFFS = ("2008-01-01", "2016-01-01")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "reciprocal rank"}),
    ("search", {"query": "pear", "limit": 3}),
    ("fetch", {"id": "wikipedia:Pyrus", "max_chars": 500}),
    ("fetch", {"id": "wikipedia:Mean_reciprocal_rank", "offset": 100, "max_chars": 300}),
    ("fetch", {"id": "wikipedia:Never_existed"}),
]
BIG_BODY = json.dumps({"query": {"pages": ["x" * 50 for _ in range(1_000)]}}).encode()  # > 32 KB: a diskcache file


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def settings(data_dir: Path) -> Settings:
    return Settings.from_env({}, data_dir=data_dir)


def answers(data_dir: Path) -> list[str]:
    """Canonical JSON of every call of CALLS at each cutoff (errors as code + message), from a non-logging service."""
    out = []
    for cutoff in CUTOFFS:
        service = make_service(data_dir, cutoff)
        for tool, arguments in CALLS:
            try:
                response: Any = service.execute(tool, arguments).response.model_dump(mode="json")  # type: ignore
            except FrozenSearchError as exc:
                response = {"error": exc.code, "message": exc.message}
            out.append(json.dumps(response, sort_keys=True))
        service.close()
    return out


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Real exports ingested, three HTTP cache entries (one stored as a file) and a logged session of 10 calls."""
    data_dir = build_data_dir(tmp_path_factory.mktemp("source"), (MRR, PEAR_2002, PEAR_2014, PYRUS))
    with HttpCache(data_dir / "http-cache") as cache:
        stamp = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
        for key, body in (("k-small", b'{"ok": 1}'), ("k-big", BIG_BODY), ("k-redirect", b"")):
            cache.put(key, method="GET", url=f"https://en.wikipedia.org/w/api.php?{key}", status=200,
                      headers=[("Content-Type", "application/json")], body=body, fetched_at=stamp)
    for cutoff in CUTOFFS:
        service = make_service(data_dir, cutoff, log=data_dir / "querylog.jsonl")
        for tool, arguments in CALLS:
            try:
                getattr(service, tool)(**arguments)
            except FrozenSearchError:
                pass
        service.close()
    return data_dir


@pytest.fixture(scope="module")
def bundle(source: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("bundle") / "data.tar.gz"
    export_bundle(settings(source), path)
    return path


def members(path: Path) -> list[tuple[tarfile.TarInfo, bytes]]:
    with tarfile.open(path, "r:gz") as tar:
        return [(info, tar.extractfile(info).read() if info.isreg() else b"") for info in tar]  # type: ignore


def write_bundle(path: Path, entries: list[tuple[tarfile.TarInfo, bytes]]) -> Path:
    """A tar.gz with a valid gzip layer (and the header export writes), whatever its members say."""
    with path.open("wb") as raw, gzip.GzipFile("", "wb", 6, raw, mtime=0) as packed, \
            tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return path


def assert_refused(bundle_path: Path, target: Path, match: str, error: type[Exception] = BundleInvalid) -> None:
    target.mkdir(parents=True, exist_ok=True)
    with pytest.raises(error, match=match):
        import_bundle(bundle_path, settings(target))
    assert list(target.iterdir()) == []  # nothing written into the data dir
    assert not [p.name for p in target.parent.iterdir() if ".import-" in p.name]  # no staging left behind


def test_manifest_lists_versions_cutoffs_counts_and_every_file(bundle: Path) -> None:
    entries = members(bundle)
    assert entries[0][0].name == "manifest.json" and bundle.read_bytes()[:10] == GZIP_HEADER
    manifest = Manifest.from_json(entries[0][1])
    assert (manifest.format, manifest.store_schema, manifest.index_included) == (FORMAT, SCHEMA_VERSION, True)
    assert manifest.frozen_search and manifest.tantivy == "0.27.0"
    assert manifest.cutoffs == ["2008-01-01T00:00:00Z", "2016-01-01T00:00:00Z"]
    assert manifest.counts == {"dump_revisions": 49, "live_revisions": 0, "cache_entries": 3, "log_lines": 10}
    files = {info.name: data for info, data in entries[1:]}
    assert set(files) == set(manifest.files)
    assert {"store.sqlite3", "querylog.jsonl", "http-cache/cache.db", "index/generation.json"} <= set(files)
    assert any(name.endswith(".val") for name in files)  # the big body, stored by diskcache as a file
    assert not any(name.endswith((".lock", "-wal", "-shm")) for name in files)
    for name, data in files.items():
        assert manifest.files[name] == {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}


def test_import_answers_and_replays_identically(source: Path, bundle: Path, tmp_path: Path) -> None:
    target = tmp_path / "fresh"
    manifest = import_bundle(bundle, settings(target))
    assert manifest.counts["log_lines"] == 10
    assert answers(target) == answers(source)
    assert (target / "querylog.jsonl").read_bytes() == (source / "querylog.jsonl").read_bytes()
    with HttpCache(source / "http-cache") as before, HttpCache(target / "http-cache") as after:
        assert list(after) == list(before) and len(after) == 3
        assert all(after.get(key) == before.get(key) for key in before)
    replayed = run("replay", str(target / "querylog.jsonl"), "--data-dir", str(target))
    assert replayed.exit_code == 0, replayed.output
    assert replayed.output.count(": identical") == 10 and "0 line(s) different" in replayed.output
    assert [p.name for p in tmp_path.iterdir()] == ["fresh"]


def test_cli_export_without_index_then_import_rebuilds_it(source: Path, tmp_path: Path) -> None:
    path = tmp_path / "no-index.tar.gz"
    exported = run("export", str(path), "--no-index", "--data-dir", str(source))
    assert exported.exit_code == 0, exported.output
    assert "no index" in exported.output and f"sha256 {file_sha256(path)}" in exported.output
    assert not any(info.name.startswith("index/") for info, _ in members(path))
    imported = run("import", str(path), "--sha256", file_sha256(path), "--data-dir", str(tmp_path / "new"))
    assert imported.exit_code == 0, imported.output
    assert "index rebuilt from the store" in imported.output
    assert answers(tmp_path / "new") == answers(source)


def test_a_rebuilt_but_unchanged_bundle_is_accepted(bundle: Path, tmp_path: Path) -> None:
    copy = write_bundle(tmp_path / "same.tar.gz", members(bundle))
    import_bundle(copy, settings(tmp_path / "new"))


@pytest.mark.parametrize("which", ["manifest.json", "store.sqlite3", "http-cache/cache.db", ".val", "querylog.jsonl",
                                   "index/meta.json"])
def test_one_changed_byte_inside_a_member_is_refused(bundle: Path, tmp_path: Path, which: str) -> None:
    entries = members(bundle)
    position = next(i for i, (info, _) in enumerate(entries) if info.name == which or info.name.endswith(which))
    info, data = entries[position]
    changed = bytearray(data)
    changed[len(data) // 2] ^= 0x01
    entries[position] = (info, bytes(changed))
    tampered = write_bundle(tmp_path / "tampered.tar.gz", entries)
    assert_refused(tampered, tmp_path / "target", "manifest.json fails its own sha256" if which == "manifest.json"
                   else f"bundle member '{info.name}' fails its sha256 check")


def test_raw_byte_flips_are_refused(bundle: Path, tmp_path: Path) -> None:
    data = bundle.read_bytes()
    original = gzip.decompress(data)
    positions = sorted({*range(10), *range(len(data) - 8, len(data)), *range(10, len(data) - 8, len(data) // 250)})
    refused = 0
    for position in positions:
        changed = bytearray(data)
        changed[position] ^= 0x01
        path = tmp_path / "flipped.tar.gz"
        path.write_bytes(bytes(changed))
        target = tmp_path / f"target-{position}"
        try:
            import_bundle(path, settings(target))
        except BundleInvalid:
            refused += 1
            assert not target.exists()
        else:  # a bit deflate ignores: then every extracted byte is the exported one
            assert gzip.decompress(bytes(changed)) == original
            shutil.rmtree(target)
        with pytest.raises(BundleInvalid, match="expected sha256"):
            import_bundle(path, settings(target), expect_sha256=file_sha256(bundle))
    assert refused >= 0.98 * len(positions), (refused, len(positions))  # measured: about 99.7%


def test_truncated_or_foreign_files_are_refused(bundle: Path, tmp_path: Path) -> None:
    data = bundle.read_bytes()
    for name, content in (("half", data[: len(data) // 2]), ("no-trailer", data[:-4]), ("empty", b""),
                          ("text", b"hello"), ("plain-tar", gzip.decompress(data))):
        path = tmp_path / f"{name}.tar.gz"
        path.write_bytes(content)
        assert_refused(path, tmp_path / "target", "unreadable|gzip header")


def _with(bundle: Path, extra: tarfile.TarInfo, data: bytes = b"x") -> list[tuple[tarfile.TarInfo, bytes]]:
    entries = members(bundle)
    return [entries[0], (extra, data), *entries[1:]]


@pytest.mark.parametrize("name", ["../evil", "/tmp/evil", "index/../../evil", "./store.sqlite3", "evil",
                                  "http-cache//x", "store.sqlite3/x"])
def test_unsafe_member_paths_are_refused(bundle: Path, tmp_path: Path, name: str) -> None:
    tampered = write_bundle(tmp_path / "unsafe.tar.gz", _with(bundle, tarfile.TarInfo(name)))
    assert_refused(tampered, tmp_path / "deep" / "target", f"bundle member '{name}' ")
    assert not (tmp_path / "evil").exists() and not (tmp_path / "deep" / "evil").exists()


@pytest.mark.parametrize("kind", [tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.DIRTYPE, tarfile.FIFOTYPE])
def test_links_and_special_members_are_refused(bundle: Path, tmp_path: Path, kind: bytes) -> None:
    info = tarfile.TarInfo("index/generation.json")
    info.type, info.linkname = kind, "/etc/passwd"
    tampered = write_bundle(tmp_path / "link.tar.gz", _with(bundle, info, b""))
    assert_refused(tampered, tmp_path / "target", "is not a regular file")


def test_missing_extra_and_duplicated_members_are_refused(bundle: Path, tmp_path: Path) -> None:
    entries = members(bundle)
    dropped = [entry for entry in entries if entry[0].name != "querylog.jsonl"]
    assert_refused(write_bundle(tmp_path / "a.tar.gz", dropped), tmp_path / "t", "'querylog.jsonl' listed in "
                   "manifest.json is missing")
    extra = [*entries, (tarfile.TarInfo("index/extra.bin"), b"extra")]
    assert_refused(write_bundle(tmp_path / "b.tar.gz", extra), tmp_path / "t", "'index/extra.bin' is not listed")
    twice = [*entries, entries[-1]]
    assert_refused(write_bundle(tmp_path / "c.tar.gz", twice), tmp_path / "t", "appears twice")
    no_manifest = entries[1:]
    assert_refused(write_bundle(tmp_path / "d.tar.gz", no_manifest), tmp_path / "t", "comes first, not manifest")


def test_a_consistently_edited_manifest_is_still_refused(bundle: Path, tmp_path: Path) -> None:
    entries = members(bundle)
    manifest = Manifest.from_json(entries[0][1])
    forged = Manifest(**{**manifest.__dict__, "counts": {**manifest.counts, "cache_entries": 2}})
    entries[0] = (entries[0][0], forged.to_json())  # its own sha256 recomputed: only the counts give it away
    assert_refused(write_bundle(tmp_path / "forged.tar.gz", entries), tmp_path / "t",
                   "holds 3 cache entries; manifest.json says 2")


def test_import_never_overwrites(source: Path, bundle: Path, tmp_path: Path) -> None:
    target = tmp_path / "occupied"
    (target / "index").mkdir(parents=True)
    shutil.copy(source / "store.sqlite3", target / "store.sqlite3")
    before = (target / "store.sqlite3").read_bytes()
    with pytest.raises(ConfigError, match="already exists"):
        import_bundle(bundle, settings(target))
    assert (target / "store.sqlite3").read_bytes() == before and sorted(p.name for p in target.iterdir()) == [
        "index", "store.sqlite3"]
    result = CliRunner().invoke(main, ["import", str(bundle), "--data-dir", str(target)])
    assert result.exit_code == 2 and "[config_error]" in result.output
    result = CliRunner().invoke(main, ["import", str(tmp_path / "missing.tar.gz"), "--data-dir", str(target)])
    assert result.exit_code == 1 and "[invalid_request]" in result.output


def test_cli_refusal_prints_the_code(bundle: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["import", str(bundle), "--sha256", "0" * 64, "--data-dir",
                                       str(tmp_path / "t")])
    assert result.exit_code == 1 and "\n[bundle_invalid] " in result.output
    assert not (tmp_path / "t").exists()


def test_export_refuses_a_corrupt_cache_entry_and_writes_nothing(source: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(source, copy)
    value = next((copy / "http-cache").rglob("*.val"))
    data = bytearray(value.read_bytes())
    data[-10] ^= 0x01
    value.write_bytes(bytes(data))
    with pytest.raises(StoreIntegrityError, match="sha256 mismatch"):
        export_bundle(settings(copy), tmp_path / "out.tar.gz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]
    with pytest.raises(ConfigError, match="no store"):
        export_bundle(settings(tmp_path / "empty"), tmp_path / "out.tar.gz")
