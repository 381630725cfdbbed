"""Bundles: export a data dir built from real exports, import it elsewhere, answers and replay identical; any changed
byte, unsafe member or occupied target refused whole, the target left empty."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import pickle
import shutil
import sqlite3
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
from frozen_search.store import SCHEMA_VERSION, WRITER_LOCK
from tests.conftest import MRR, PEAR_2002, PEAR_2014, PYRUS, build_data_dir, make_service

CUTOFFS = ("2008-01-01", "2016-01-01")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("search", {"query": "reciprocal rank"}),
    ("search", {"query": "pear", "limit": 3}),
    ("fetch", {"id": "wikipedia:Pyrus", "max_chars": 500}),
    ("fetch", {"id": "wikipedia:Mean_reciprocal_rank", "offset": 100, "max_chars": 300}),
    ("fetch", {"id": "wikipedia:Never_existed"}),
]
BIG_BODY = json.dumps({"query": {"pages": ["x" * 50 for _ in range(1_000)]}}).encode()  # > 32 KB


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
    assert [p.name for p in target.iterdir()] in ([], [WRITER_LOCK])  # nothing written into the data dir
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
    assert {"store.sqlite3", "querylog.jsonl", "http-cache/exchanges.sqlite3", "index/generation.json"} <= set(files)
    assert [name for name in files if name.startswith("http-cache/")] == ["http-cache/exchanges.sqlite3"]
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


@pytest.mark.parametrize("which", ["manifest.json", "store.sqlite3", "http-cache/exchanges.sqlite3", "querylog.jsonl",
                                   "index/meta.json"])
def test_one_changed_byte_inside_a_member_is_refused(bundle: Path, tmp_path: Path, which: str) -> None:
    entries = members(bundle)
    position = next(i for i, (info, _) in enumerate(entries) if info.name == which or info.name.endswith(which))
    info, data = entries[position]
    changed = bytearray(data)
    middle = data.index(b'"sha256": "') + 20 if which == "manifest.json" else len(data) // 2  # a hex digit
    changed[middle] ^= 0x01
    entries[position] = (info, bytes(changed))
    tampered = write_bundle(tmp_path / "tampered.tar.gz", entries)
    assert_refused(tampered, tmp_path / "target", "manifest.json fails its own sha256" if which == "manifest.json"
                   else f"bundle member '{info.name}' fails its sha256 check")


@pytest.mark.slow  # ~270 flipped bundles imported; fast tier: the member, manifest and truncation tests
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
    assert (target / "store.sqlite3").read_bytes() == before and sorted(p.name for p in target.iterdir()
                                                                          if p.name != WRITER_LOCK) == [
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
    with sqlite3.connect(copy / "http-cache" / "exchanges.sqlite3") as raw:
        (record,) = raw.execute("SELECT record FROM exchanges WHERE key = 'k-big'").fetchone()
        raw.execute("UPDATE exchanges SET record = ? WHERE key = 'k-big'", (record[:-10] + b"\0" + record[-9:],))
    raw.close()
    with pytest.raises(StoreIntegrityError, match="sha256 mismatch"):
        export_bundle(settings(copy), tmp_path / "out.tar.gz")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]
    with pytest.raises(ConfigError, match="no store"):
        export_bundle(settings(tmp_path / "empty"), tmp_path / "out.tar.gz")


class _Payload:
    """Unpickling this writes the marker file: the proof that something decoded a pickle."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Path.write_text, (self.marker, "pwned"))


def _rebuilt(entries: list[tuple[tarfile.TarInfo, bytes]], replace: dict[str, bytes | None],
             add: dict[str, bytes] | None = None) -> list[tuple[tarfile.TarInfo, bytes]]:
    """The bundle with members replaced/dropped/added and its manifest rebuilt to match (it needs no secret)."""
    kept = [(info, replace.get(info.name, data)) for info, data in entries[1:]
            if replace.get(info.name, b"") is not None]
    kept += [(tarfile.TarInfo(name), data) for name, data in (add or {}).items()]
    manifest = Manifest.from_json(entries[0][1])
    files = {info.name: {"sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)} for info, data in kept}
    counts = {**manifest.counts, "cache_entries": 3}
    forged = Manifest(**{**manifest.__dict__, "files": files, "counts": counts})
    return [(entries[0][0], forged.to_json()), *kept]


def _cache_file(tmp_path: Path, ddl: list[str], rows: list[tuple[object, object]]) -> bytes:
    path = tmp_path / "crafted.sqlite3"
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as db:
        for statement in ddl:
            db.execute(statement)
        db.executemany("INSERT INTO exchanges (key, record) VALUES (?, ?)", rows)
    db.close()
    return path.read_bytes()


OUR_SCHEMA = ["CREATE TABLE exchanges (key TEXT PRIMARY KEY NOT NULL, record BLOB NOT NULL)",
              f"PRAGMA application_id={0x46534843}"]


@pytest.mark.parametrize("variant", ["pickle-record", "pickle-key", "diskcache-table", "diskcache-folder",
                                     "trigger", "user_version"])
def test_a_bundle_whose_cache_carries_a_pickle_is_refused_without_running_it(bundle: Path, tmp_path: Path,
                                                                            variant: str) -> None:
    """Issue 13.1: diskcache unpickled ``raw=0`` keys and ``mode=4`` values of a crafted bundle on import."""
    marker = tmp_path / "marker"
    payload = pickle.dumps(_Payload(marker))
    entries = members(bundle)
    name = "http-cache/exchanges.sqlite3"
    if variant == "pickle-record":
        crafted = _rebuilt(entries, {name: _cache_file(tmp_path, OUR_SCHEMA, [("k-small", payload), ("k-big", payload),
                                                                              ("k-redirect", payload)])})
        match = "not a frozen-search record"
    elif variant == "pickle-key":
        crafted = _rebuilt(entries, {name: _cache_file(tmp_path, OUR_SCHEMA, [(payload, payload)])})
        match = "key that is not text"
    elif variant == "diskcache-table":  # diskcache's own table beside ours: the schema is not ours
        ddl = [*OUR_SCHEMA, "CREATE TABLE Cache (rowid INTEGER PRIMARY KEY, key BLOB, raw INTEGER, mode INTEGER, "
                            "value BLOB)",
               f"INSERT INTO Cache VALUES (1, X'{payload.hex()}', 0, 4, X'{payload.hex()}')"]
        crafted = _rebuilt(entries, {name: _cache_file(tmp_path, ddl, [])})
        match = "not a frozen-search HTTP cache"
    elif variant == "trigger":
        ddl = [*OUR_SCHEMA, "CREATE TRIGGER t AFTER INSERT ON exchanges BEGIN DELETE FROM exchanges; END"]
        crafted = _rebuilt(entries, {name: _cache_file(tmp_path, ddl, [])})
        match = "not a frozen-search HTTP cache"
    elif variant == "user_version":  # nothing of ours sets it: a file that does was not written by us
        crafted = _rebuilt(entries, {name: _cache_file(tmp_path, [*OUR_SCHEMA, "PRAGMA user_version=3"], [])})
        match = "not a frozen-search HTTP cache"
    else:  # an old diskcache folder with a pickled row: not part of the layout at all
        crafted = _rebuilt(entries, {name: None}, {"http-cache/cache.db": payload})
        match = "the one file http-cache/exchanges.sqlite3"
    assert_refused(write_bundle(tmp_path / "evil.tar.gz", crafted), tmp_path / "target", match)
    assert not marker.exists()
    pickle.loads(payload)  # the payload is live: unpickled, it does write the marker
    assert marker.exists()


# --- issue 13.8: bounded members, no trailing data, staging of killed runs cleaned ---


def _regzip(raw_tar: bytes) -> bytes:
    """``raw_tar`` compressed the way export does (its fixed gzip header)."""
    out = io.BytesIO()
    with gzip.GzipFile("", "wb", 6, out, mtime=0) as packed:
        packed.write(raw_tar)
    return out.getvalue()


def test_issue_13_8_bytes_or_a_second_gzip_member_after_the_bundle_are_refused(bundle: Path, tmp_path: Path) -> None:
    original = bundle.read_bytes()
    for n, tail in enumerate((b"appended by an attacker", b"\x00" * 1024, gzip.compress(b"second member"),
                              _regzip(b"evil" * 3000))):
        crafted = tmp_path / f"tail{n}.tar.gz"
        crafted.write_bytes(original + tail)
        assert_refused(crafted, tmp_path / f"t{n}", "after its gzip stream")


def test_issue_13_8_data_after_the_tar_end_inside_the_gzip_is_refused(bundle: Path, tmp_path: Path) -> None:
    raw_tar = gzip.decompress(bundle.read_bytes())
    for n, tail in enumerate((b"evil", b"\x00" * 512 + b"x" * 10240)):
        crafted = tmp_path / f"inner{n}.tar.gz"
        crafted.write_bytes(_regzip(raw_tar + tail))
        assert_refused(crafted, tmp_path / f"i{n}", "after the end of its tar archive")


@pytest.mark.parametrize("right_sha", [True, False])
def test_issue_13_8_a_zero_bomb_listed_in_the_manifest_is_refused_before_staging(
        bundle: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, right_sha: bool) -> None:
    """A member of zeros (16 MiB here, 1 GiB in the issue) listed with its size, with the right or a wrong sha256:
    refused from the manifest's sizes before a byte of it is written (the bound scaled down for the test)."""
    import frozen_search.cache.bundle as bundle_module

    monkeypatch.setattr(bundle_module, "EXPANSION_SLACK", 4 * 2**20)
    zeros = bytes(16 * 2**20)
    entries = _rebuilt(members(bundle), {}, add={"index/bomb": zeros})
    if not right_sha:
        manifest = Manifest.from_json(entries[0][1])
        files = {**manifest.files, "index/bomb": {"sha256": "0" * 64, "bytes": len(zeros)}}
        entries[0] = (entries[0][0], Manifest(**{**manifest.__dict__, "files": files}).to_json())
    crafted = write_bundle(tmp_path / "bomb.tar.gz", entries)
    assert crafted.stat().st_size < 1 * 2**20
    written: list[int] = []
    real_open = Path.open

    def spy(self: Path, mode: str = "r", *args: Any, **kwargs: Any) -> Any:
        if mode == "xb":
            written.append(1)
        return real_open(self, mode, *args, **kwargs)

    monkeypatch.setattr(Path, "open", spy)
    assert_refused(crafted, tmp_path / "target", "decompression bomb")
    assert written == []  # not one member staged


def test_issue_13_8_a_member_is_never_written_past_its_listed_size(bundle: Path, tmp_path: Path) -> None:
    """The tar header agrees with the manifest (16 bytes) but a PAX ``size`` record makes tarfile read 100 KiB:
    extraction stops at the listed size."""
    entries = _rebuilt(members(bundle), {}, add={"index/extra": b"0123456789abcdef"})
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for info, data in entries:
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    body = raw.getvalue()
    # rewrite the member as a PAX header claiming 100 KiB, then 100 KiB of data (bigger than the listing)
    head = tarfile.TarInfo("index/extra")
    head.pax_headers = {"size": str(100 * 1024)}
    head.size = 16
    lying = head.tobuf(tarfile.PAX_FORMAT)
    start = body.index(tarfile.TarInfo("index/extra").tobuf(tarfile.PAX_FORMAT)[:100])
    crafted_tar = body[:start] + lying + b"A" * (100 * 1024) + bytes(2 * 512)
    crafted_tar += bytes(-len(crafted_tar) % tarfile.RECORDSIZE)
    crafted = tmp_path / "lying.tar.gz"
    crafted.write_bytes(_regzip(crafted_tar))
    assert_refused(crafted, tmp_path / "target", "bytes|longer than")


def test_staging_locks_beside_their_folders_leave_nothing_after_a_kill_at_any_point(tmp_path: Path) -> None:
    """The lock file is made and locked before its folder: a run killed before the folder existed leaves only a free
    lock file, one killed after leaves both, and the next run removes them; a held one stays, with its folder."""
    import fcntl
    import os

    from frozen_search.cache.bundle import EXPORT_STAGING_PREFIX, _staging

    before_folder = tmp_path / f"{EXPORT_STAGING_PREFIX}a.lock"
    before_folder.touch()  # killed between mkstemp and mkdir
    after_folder = tmp_path / f"{EXPORT_STAGING_PREFIX}b"
    (after_folder / "bundle").mkdir(parents=True)
    (tmp_path / f"{EXPORT_STAGING_PREFIX}b.lock").touch()
    running = tmp_path / f"{EXPORT_STAGING_PREFIX}c"
    running.mkdir()
    held = os.open(tmp_path / f"{EXPORT_STAGING_PREFIX}c.lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(held, fcntl.LOCK_EX)  # an export still running
    try:
        with _staging(tmp_path, EXPORT_STAGING_PREFIX) as folder:
            assert folder.is_dir() and folder.with_name(folder.name + ".lock").exists()
            left = sorted(p.name for p in tmp_path.iterdir())
        assert left == sorted([folder.name, folder.name + ".lock", running.name, running.name + ".lock"])
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([running.name, running.name + ".lock"])
    finally:
        os.close(held)
    with _staging(tmp_path, EXPORT_STAGING_PREFIX):
        pass
    assert list(tmp_path.iterdir()) == []


def test_issue_13_8_staging_left_by_a_killed_export_or_import_is_cleaned(source: Path, bundle: Path,
                                                                          tmp_path: Path) -> None:
    import fcntl
    import os

    from frozen_search.cache.bundle import EXPORT_STAGING_PREFIX, import_staging_prefix

    target = tmp_path / "target"
    stale_import = tmp_path / f"{import_staging_prefix(settings(target))}killed"
    stale_export = tmp_path / f"{EXPORT_STAGING_PREFIX}killed"
    running = tmp_path / f"{EXPORT_STAGING_PREFIX}running"
    for folder in (stale_import, stale_export, running):
        (folder / "bundle").mkdir(parents=True)
        (folder / "bundle" / "store.sqlite3").write_bytes(bytes(2**20))
        (folder / ".staging.lock").touch()
    held = os.open(running / ".staging.lock", os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)  # an export still running
    try:
        import_bundle(bundle, settings(target))
        assert not stale_import.exists()
        export_bundle(settings(source), tmp_path / "again.tar.gz")
        assert not stale_export.exists() and running.exists()
    finally:
        os.close(held)
    export_bundle(settings(source), tmp_path / "again.tar.gz")
    assert not running.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".") and p.is_dir()]
