"""Issue 13.11: the keyless chain proves internal consistency only; a signing key (HMAC-SHA256 of each line's hash,
``sig``) makes a rewritten chain fail without the key; a published head (``audit --expect-head``) catches a dropped
tail. Old unsigned logs keep their hashes and still audit OK."""

from __future__ import annotations

import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from frozen_search.cli import main
from frozen_search.config import Settings
from frozen_search.errors import ConfigError
from frozen_search.querylog import QueryLog, _record_hash, audit, canonical_json, read_log
from tests.cross_source.test_querylog import CUTOFF, fixed_clock, outcome, write_calls

KEY = b"correct horse battery staple"


def _signed(path: Path, titles: list[str], key: bytes = KEY) -> list[dict[str, Any]]:
    records = []
    with QueryLog(path, clock=fixed_clock, key=key) as log:
        for title in titles:
            with log.call("s1", "search", {"query": title}, CUTOFF) as rec:
                rec.set_outcome(outcome(title))
            assert rec.record is not None
            records.append(rec.record)
    return records


def _forge(path: Path, line: int, edit: Any) -> None:
    """What anyone can do without the key: edit a line and re-hash (and, for lack of the key, drop sig on) the rest."""
    records = [record for _, record in read_log(path)]
    edit(records[line - 1])
    prev = "0" * 64
    for record in records:
        record.pop("sig", None)
        record["prev"] = prev
        record["hash"] = prev = _record_hash(record)
    path.write_text("".join(canonical_json(record) + "\n" for record in records))


def test_unsigned_lines_keep_their_hash_and_signed_lines_sign_it(tmp_path: Path) -> None:
    plain, signed = tmp_path / "plain.jsonl", tmp_path / "signed.jsonl"
    unsigned = write_calls(plain, ["Alpha", "Beta"])
    records = _signed(signed, ["Alpha", "Beta"])
    assert "sig" not in unsigned[0]
    for record in unsigned + records:  # sig is outside the hash: an unsigned line hashes as it always did
        body = {k: v for k, v in record.items() if k not in ("hash", "sig")}
        assert record["hash"] == hashlib.sha256(canonical_json(body).encode()).hexdigest()
    for record in records:
        assert record["sig"] == hmac.new(KEY, record["hash"].encode(), hashlib.sha256).hexdigest()
    assert audit(plain).ok and audit(signed).ok
    report = audit(signed, key=KEY)
    assert report.ok and report.signed == 2 and "checked with the key, 2 of 2 lines signed" in report.render()
    assert "internal consistency only" in audit(signed).render()
    assert not audit(plain, key=KEY).ok  # with a key, an unsigned line is a break
    assert [b.kind for b in audit(plain, key=KEY).chain_breaks] == ["unsigned", "unsigned"]
    assert [b.kind for b in audit(signed, key=b"another key").chain_breaks] == ["bad_signature"] * 2


def test_a_rewritten_chain_passes_without_the_key_and_fails_with_it(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    _signed(path, ["Alpha", "Beta", "Gamma"])

    def retitle(record: dict[str, Any]) -> None:
        record["response"]["results"][0]["title"] = "Beto"

    _forge(path, 2, retitle)
    assert audit(path).ok  # the keyless chain cannot tell
    report = audit(path, key=KEY)
    assert not report.ok and [(b.line, b.kind) for b in report.chain_breaks] == [
        (1, "unsigned"), (2, "unsigned"), (3, "unsigned")]


def test_a_published_head_catches_a_dropped_tail_and_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "log.jsonl"
    records = _signed(path, ["Alpha", "Beta", "Gamma"])
    head = records[-1]["hash"]
    assert audit(path, key=KEY, expect_head=head).ok
    full = path.read_text()
    path.write_text("".join(full.splitlines(keepends=True)[:2]))  # the tail dropped: the chain still holds
    report = audit(path, key=KEY, expect_head=head)
    assert audit(path, key=KEY).ok and not report.ok
    assert report.head_problem is not None and "no line has it" in report.head_problem
    path.write_text(full)
    _signed(path, ["Delta"])  # appended after publication
    report = audit(path, key=KEY, expect_head=head)
    assert not report.ok and "it is line 3's hash (1 line(s) appended since)" in str(report.head_problem)
    assert "expected head: the chain ends at" in report.render()


def test_the_service_signs_with_the_key_from_the_settings_and_the_cli_checks_it(wiki_data_dir: Path,
                                                                                   tmp_path: Path) -> None:
    from tests.conftest import make_service

    log, key_file = tmp_path / "log.jsonl", tmp_path / "key"
    key_file.write_bytes(KEY + b"\n")
    settings = Settings.from_env({"FROZEN_SEARCH_LOG_KEY_FILE": str(key_file)})
    assert settings.log_signing_key() == KEY and "correct horse" not in repr(Settings.from_env(
        {"FROZEN_SEARCH_LOG_KEY": KEY.decode()}))
    env = {"FROZEN_SEARCH_LOG": str(log), "FROZEN_SEARCH_DATA_DIR": str(wiki_data_dir),
           "FROZEN_SEARCH_CUTOFF": "2010-06-01", "FROZEN_SEARCH_LOG_KEY": KEY.decode()}
    runner = CliRunner()
    assert runner.invoke(main, ["search", "pear"], env=env).exit_code == 0
    assert runner.invoke(main, ["fetch", "wikipedia:Nope"], env=env).exit_code == 1
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(lines) == 2 and all("sig" in line for line in lines)
    head = lines[-1]["hash"]
    ok = runner.invoke(main, ["audit", str(log), "--key-file", str(key_file), "--expect-head", head], env={})
    assert ok.exit_code == 0 and "result: OK" in ok.output, ok.output
    wrong = tmp_path / "wrong"
    wrong.write_bytes(b"guess")
    bad = runner.invoke(main, ["audit", str(log), "--key-file", str(wrong)], env={})
    assert bad.exit_code == 1 and "bad_signature" in bad.output
    stale = runner.invoke(main, ["audit", str(log), "--expect-head", "ab" * 32], env={})
    assert stale.exit_code == 1 and "the log was truncated or rewritten" in stale.output
    (tmp_path / "empty").write_bytes(b"\n")
    empty = runner.invoke(main, ["audit", str(log), "--key-file", str(tmp_path / "empty")], env={})
    assert empty.exit_code == 2 and "[config_error]" in empty.output
    service = make_service(wiki_data_dir, "2010-06-01", log=log)  # no key: an unsigned line in a signed log
    service.search("pear")
    service.close()
    mixed = runner.invoke(main, ["audit", str(log), "--key-file", str(key_file)], env={})
    assert mixed.exit_code == 1 and "line 3: unsigned" in mixed.output


def test_an_empty_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError):
        QueryLog(tmp_path / "log.jsonl", key=b"")


OLD_LINE = ('{"arguments":{"limit":5,"query":"pear"},"cutoff":"2026-01-06T00:00:00Z","error":{"code":"invalid_req'
            'uest","message":"m"},"event":"frozen_search.call","hash":"918e860e7fd95a123c7516c5cf2824e5fafa35d199'
            '01a0cf3e3fc9f5ef0e5fdb","hits":[],"latency_ms":0.002253000275231898,"mode":"local","prev":"000000000'
            '0000000000000000000000000000000000000000000000000000000","rejections":[],"response":null,"schema_ver'
            'sion":1,"session":"s1","tool":"search","ts":"2026-03-01T00:00:00Z"}')
"""A line written by the code before signing existed (main at 0b954f4)."""


def test_a_log_written_before_signing_still_audits_ok_and_can_be_continued(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(OLD_LINE + "\n")
    assert audit(path).ok and audit(path).head == json.loads(OLD_LINE)["hash"]
    with QueryLog(path, clock=fixed_clock, key=KEY) as log:  # signing turned on later: the chain continues
        with log.call("s2", "fetch", {"id": "wikipedia:Pear"}, CUTOFF) as rec:
            rec.error = {"code": "not_found_before_cutoff", "message": "m"}
    report = audit(path)
    assert report.ok and report.lines == 2 and report.signed == 1
    assert [b.line for b in audit(path, key=KEY).chain_breaks] == [1]  # with the key, the old line is unsigned
