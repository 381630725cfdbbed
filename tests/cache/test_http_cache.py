"""The HTTP cache: complete, validated records only; sha256 checked on every read; raw bytes, never pickles."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import diskcache
import pytest

from frozen_search.cache.http_cache import CachedResponse, CacheStats, HttpCache, guarded, require_json
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


def test_large_bodies_round_trip_and_tampering_with_their_file_is_caught(cache: HttpCache, tmp_path: Path) -> None:
    body = b"x" * 100_000  # above diskcache's 32 KB threshold: stored in a file of its own
    put(cache, body=body)
    assert cache.get("k1") is not None
    files = [p for p in (tmp_path / "http-cache").rglob("*.val")]
    assert len(files) == 1
    data = bytearray(files[0].read_bytes())
    data[-1] ^= 1
    files[0].write_bytes(bytes(data))
    with pytest.raises(StoreIntegrityError, match="sha256 mismatch"):
        cache.get("k1")


def _tamper(path: Path, key: str, value: object) -> None:
    with diskcache.Cache(str(path)) as raw:
        raw.set(key, value)


@pytest.mark.parametrize(("name", "mangle", "message"), [
    ("one body byte", lambda raw: raw[:-1] + bytes([raw[-1] ^ 1]), "sha256 mismatch"),
    ("truncated body", lambda raw: raw[:-2], "sha256 mismatch"),
    ("not a record", lambda raw: b"hello", "not a frozen-search record"),
    ("a pickle", lambda raw: {"status": 200}, "not a frozen-search record"),
    ("broken metadata", lambda raw: raw.replace(b'"status":200', b'"status":"x"'), "unreadable metadata"),
    ("missing metadata", lambda raw: raw.replace(b'"status":200,', b""), "unreadable metadata"),
])
def test_corrupt_entries_are_never_served(cache: HttpCache, tmp_path: Path, name: str,
                                          mangle: object, message: str) -> None:
    put(cache)
    with diskcache.Cache(str(tmp_path / "http-cache")) as raw:
        original = raw.get("k1")
    _tamper(tmp_path / "http-cache", "k1", mangle(original))  # type: ignore[operator]
    with pytest.raises(StoreIntegrityError, match=message):
        cache.get("k1")
    assert cache.stats().corrupt == 1


def test_a_record_filed_under_another_key_is_corrupt(cache: HttpCache, tmp_path: Path) -> None:
    put(cache, key="k1")
    with diskcache.Cache(str(tmp_path / "http-cache")) as raw:
        raw.set("k2", raw.get("k1"))
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
