"""The HTTP cache: complete, validated records only; sha256 checked on every read; raw bytes, never pickles."""

from __future__ import annotations

import json
import pickle
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from frozen_search.cache.http_cache import (
    FILE_NAME,
    CachedResponse,
    CacheStats,
    HttpCache,
    guarded,
    require_json,
)
from frozen_search.errors import InvalidRequest, StoreIntegrityError, UpstreamUnavailable

FETCHED = datetime(2026, 1, 5, 12, 30, 0, tzinfo=UTC)
HEADERS = [("Content-Type", "application/json; charset=utf-8"), ("X-Multi", "a"), ("x-multi", "b")]


def put(cache: HttpCache, key: str = "k1", body: bytes = b'{"a": 1}', **extra: object) -> CachedResponse:
    fields: dict[str, object] = dict(method="get", url="https://h.org/x?api_key=***", status=200, headers=HEADERS,
                                     body=body, fetched_at=FETCHED)
    fields.update(extra)
    return cache.put(key, **fields)  # type: ignore[arg-type]


@pytest.fixture
def cache(tmp_path: Path) -> Iterator[HttpCache]:
    with HttpCache(tmp_path / "http-cache") as opened:
        yield opened


def test_round_trip_keeps_every_field_and_byte(cache: HttpCache) -> None:
    body = bytes(range(256)) * 3
    stored = put(cache, body=body)
    read = cache.get("k1")
    assert read == stored
    assert read is not None and read.body == body
    assert read.method == "GET" and read.status == 200 and read.url == "https://h.org/x?api_key=***"
    assert read.headers == tuple(HEADERS)
    assert read.fetched_at == "2026-01-05T12:30:00Z"
    assert len(read.body_sha256) == 64


def test_fetched_at_is_stored_in_utc_and_must_be_aware(cache: HttpCache) -> None:
    plus_two = timezone(timedelta(hours=2))
    assert put(cache, fetched_at=datetime(2026, 1, 5, 14, 30, 0, 123, tzinfo=plus_two)).fetched_at == (
        "2026-01-05T12:30:00Z")
    with pytest.raises(ValueError, match="timezone-aware"):
        put(cache, key="naive", fetched_at=datetime(2026, 1, 5))
    assert "naive" not in cache


def test_validate_runs_before_writing_and_a_failure_writes_nothing(cache: HttpCache) -> None:
    with pytest.raises(ValueError):
        put(cache, body=b"<html>not json", validate=require_json)
    assert "k1" not in cache and len(cache) == 0
    assert cache.stats().writes == 0
    put(cache, validate=require_json)
    assert "k1" in cache


def raw_rows(folder: Path, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Run ``sql`` on the cache file directly (as an attacker or a bad disk would), committing."""
    with sqlite3.connect(folder / FILE_NAME) as db:
        return db.execute(sql, args).fetchall()


def _tamper(path: Path, key: str, value: object) -> None:
    raw_rows(path, "INSERT OR REPLACE INTO exchanges (key, record) VALUES (?, ?)", (key, value))


def test_large_bodies_round_trip_and_tampering_with_them_is_caught(cache: HttpCache, tmp_path: Path) -> None:
    body = b"x" * 3_000_000
    put(cache, body=body)
    got = cache.get("k1")
    assert got is not None and got.body == body
    (raw,) = raw_rows(tmp_path / "http-cache", "SELECT record FROM exchanges")[0]
    assert isinstance(raw, bytes)
    _tamper(tmp_path / "http-cache", "k1", raw[:-1] + b"y")
    with pytest.raises(StoreIntegrityError, match="sha256 mismatch"):
        cache.get("k1")


class _Payload:
    """Unpickling this writes the marker file: the proof that something decoded a pickle."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (Path.write_text, (self.marker, "pwned"))


@pytest.mark.parametrize(("name", "mangle", "message"), [
    ("one body byte", lambda raw: raw[:-1] + bytes([raw[-1] ^ 1]), "sha256 mismatch"),
    ("truncated body", lambda raw: raw[:-2], "sha256 mismatch"),
    ("not a record", lambda raw: b"hello", "not a frozen-search record"),
    ("text, not a blob", lambda raw: raw.decode(), "not a frozen-search record"),
    ("an integer", lambda raw: 4, "not a frozen-search record"),
    ("a pickle", lambda raw: pickle.dumps({"status": 200}), "not a frozen-search record"),
    ("broken metadata", lambda raw: raw.replace(b'"status":200', b'"status":"x"'), "unreadable metadata"),
    ("missing metadata", lambda raw: raw.replace(b'"status":200,', b""), "unreadable metadata"),
])
def test_corrupt_entries_are_never_served(cache: HttpCache, tmp_path: Path, name: str,
                                          mangle: object, message: str) -> None:
    put(cache)
    (original,) = raw_rows(tmp_path / "http-cache", "SELECT record FROM exchanges WHERE key = 'k1'")[0]
    _tamper(tmp_path / "http-cache", "k1", mangle(original))  # type: ignore[operator]
    with pytest.raises(StoreIntegrityError, match=message):
        cache.get("k1")
    assert cache.stats().corrupt == 1


def test_a_pickled_record_or_key_is_bytes_never_unpickled(cache: HttpCache, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    payload = pickle.dumps(_Payload(marker))
    put(cache)
    _tamper(tmp_path / "http-cache", "k1", payload)
    raw_rows(tmp_path / "http-cache", "INSERT INTO exchanges (key, record) VALUES (?, ?)", (payload, payload))
    with pytest.raises(StoreIntegrityError, match="not a frozen-search record"):
        cache.get("k1")
    with pytest.raises(StoreIntegrityError, match="key that is not text"):
        list(cache)
    assert not marker.exists()
    pickle.loads(payload)  # the payload is live: unpickled, it does write the marker
    assert marker.exists()


@pytest.mark.parametrize("ddl", [
    "CREATE TABLE Cache (rowid INTEGER PRIMARY KEY, key BLOB, raw INTEGER, mode INTEGER, value BLOB)",
    "CREATE VIEW v AS SELECT * FROM exchanges",
    "CREATE TRIGGER t AFTER INSERT ON exchanges BEGIN DELETE FROM exchanges; END",
])
def test_a_file_whose_schema_is_not_ours_is_refused_before_any_row_is_read(tmp_path: Path, ddl: str) -> None:
    with HttpCache(tmp_path / "c") as cache:
        put(cache)
    raw_rows(tmp_path / "c", ddl)
    with pytest.raises(StoreIntegrityError, match="not a frozen-search HTTP cache"):
        HttpCache(tmp_path / "c")


def test_a_foreign_sqlite_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c").mkdir()
    raw_rows(tmp_path / "c", "CREATE TABLE exchanges (key TEXT PRIMARY KEY NOT NULL, record BLOB NOT NULL)")
    with pytest.raises(StoreIntegrityError, match="not a frozen-search HTTP cache"):
        HttpCache(tmp_path / "c")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / FILE_NAME).write_bytes(b"not a database at all" * 100)
    with pytest.raises(StoreIntegrityError, match="cannot open"):
        HttpCache(tmp_path / "d")


def test_a_legacy_diskcache_folder_is_migrated_by_raw_rows_and_its_pickles_skipped(tmp_path: Path) -> None:
    """diskcache's own layout (table ``Cache``; raw=1 text keys; mode 1 inline bytes, 2 a file, 4 a pickle)."""
    with HttpCache(tmp_path / "new") as cache:
        small, big = put(cache, key="small"), put(cache, key="big", body=b"[" + b"1," * 40_000 + b"1]")
    records = dict(raw_rows(tmp_path / "new", "SELECT key, record FROM exchanges"))
    old, marker = tmp_path / "old", tmp_path / "marker"
    (old / "ab").mkdir(parents=True)
    (old / "ab" / "cd.val").write_bytes(records["big"])  # type: ignore[arg-type]
    payload = pickle.dumps(_Payload(marker))
    with sqlite3.connect(old / "cache.db") as db:
        db.execute("CREATE TABLE Cache (rowid INTEGER PRIMARY KEY, key BLOB, raw INTEGER, store_time REAL, "
                   "expire_time REAL, access_time REAL, access_count INTEGER DEFAULT 0, tag BLOB, size INTEGER "
                   "DEFAULT 0, mode INTEGER DEFAULT 0, filename TEXT, value BLOB)")
        rows = [("small", 1, 1, None, records["small"]), ("big", 1, 2, "ab/cd.val", None),
                (payload, 0, 1, None, records["small"]), ("evil", 1, 4, None, payload),
                ("escape", 1, 2, "../new/" + FILE_NAME, None)]
        db.executemany("INSERT INTO Cache (key, raw, mode, filename, value) VALUES (?, ?, ?, ?, ?)", rows)
    with HttpCache(old) as migrated:
        assert list(migrated) == ["big", "small"]
        assert migrated.get("small") == small and migrated.get("big") == big
    assert not marker.exists()


def test_a_record_filed_under_another_key_is_corrupt(cache: HttpCache, tmp_path: Path) -> None:
    put(cache, key="k1")
    raw_rows(tmp_path / "http-cache", "INSERT INTO exchanges SELECT 'k2', record FROM exchanges WHERE key = 'k1'")
    with pytest.raises(StoreIntegrityError, match="holds the record of k1"):
        cache.get("k2")


def test_stats_iteration_and_persistence(tmp_path: Path) -> None:
    path = tmp_path / "c"
    with HttpCache(path) as cache:
        assert cache.get("nope") is None
        put(cache, key="b")
        put(cache, key="a")
        put(cache, key="b", body=b"[2]")  # a newer record replaces the older one
        assert cache.get("a") is not None
        assert cache.stats() == CacheStats(hits=1, misses=1, writes=3, corrupt=0)
    with HttpCache(path) as reopened:
        assert list(reopened) == ["a", "b"] and len(reopened) == 2
        again = reopened.get("b")
        assert again is not None and again.body == b"[2]"
        assert reopened.stats() == CacheStats(hits=1)
    reopened.close()  # idempotent


def test_unopenable_folder_is_an_integrity_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreIntegrityError, match="cannot open"):
        HttpCache(blocker)


def test_cached_response_helpers() -> None:
    record = CachedResponse(key="k", method="GET", url="u", status=200, headers=tuple(HEADERS),
                            body='{"é": 1}'.encode(), fetched_at="2026-01-05T12:30:00Z", body_sha256="")
    assert record.header("content-type") == "application/json; charset=utf-8"
    assert record.header("X-MULTI") == "a, b"
    assert record.header("Missing") is None
    assert record.json() == {"é": 1}
    assert record.text == '{"é": 1}'
    latin = CachedResponse(key="k", method="GET", url="u", status=200,
                           headers=(("Content-Type", "text/plain; charset=latin-1"),), body=b"\xe9",
                           fetched_at="", body_sha256="")
    assert latin.text == "é"
    odd = CachedResponse(key="k", method="GET", url="u", status=200,
                         headers=(("Content-Type", "text/plain; charset=no-such-codec"),), body=b"ok\xff",
                         fetched_at="", body_sha256="")
    assert odd.text == "ok\ufffd"
    bare = CachedResponse(key="k", method="GET", url="u", status=200, headers=(), body=b"x", fetched_at="",
                          body_sha256="")
    assert bare.text == "x"
    with pytest.raises(json.JSONDecodeError):
        bare.json()


def test_guarded_validator_names_the_request_and_keeps_project_errors() -> None:
    record = CachedResponse(key="k", method="GET", url="u", status=200, headers=(), body=b"<html>",
                            fetched_at="", body_sha256="")
    assert guarded(None, "GET u") is None
    check = guarded(require_json, "GET https://h.org/x")
    assert check is not None
    with pytest.raises(UpstreamUnavailable, match=r"GET https://h.org/x answered a body that failed validation: "
                                                  r"JSONDecodeError") as caught:
        check(record)
    assert isinstance(caught.value.__cause__, json.JSONDecodeError)

    def refuse(response: CachedResponse) -> None:
        raise InvalidRequest("no")

    own = guarded(refuse, "GET u")
    assert own is not None
    with pytest.raises(InvalidRequest):
        own(record)
