"""Audit 7: an arXiv bulk-snapshot line holding a member whose name contains U+0000 (``"x\\u0000y"``: valid JSON,
RFC 8259 s. 7) crashed ``frozen-search ingest arxiv`` with a traceback (``KeyError: 'NO_SUCH_FIELD ...'``).

``fastjson.repeats_a_name`` walks pysimdjson's DOM and reads each member as ``Object[name]``; pysimdjson looks a name
up as a C string, cut at its first NUL, so ``"x\\u0000y"`` was looked up as ``"x"``: absent (``KeyError``, not
caught by the snapshot reader, which expects ``ValueError``), or another member's value, whose objects were then
checked in place of the NUL-named one (a repeated name inside it went unseen, so whether the line was a record
depended on whether pysimdjson was installed). Fixed: a text holding ``\\u0000`` is decided by ``json``
(``loads_marking_repeats``), as without pysimdjson. The lines are the real Kaggle snapshot's first three
(``../shared/realdata/arxiv/snapshot``), the second with such a member added.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from frozen_search.adapters import fastjson
from frozen_search.cli import main
from tests.arxiv.conftest import SNAPSHOT, arxiv_file, local_service


def _snapshot(path: Path, member: bytes) -> Path:
    lines = arxiv_file(SNAPSHOT).read_bytes().splitlines()[:3]
    second = lines[1].rstrip()
    assert second.endswith(b"}")
    lines[1] = second[:-1] + b", " + member + b"}" if member else second
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _ingest(root: Path, member: bytes) -> tuple[int, str, Path]:
    data = root / "data"
    result = CliRunner().invoke(main, ["ingest", "arxiv", "--data-dir", str(data),
                                       str(_snapshot(root / "snap.jsonl", member))])
    crash = "" if result.exception is None or isinstance(result.exception, SystemExit) else repr(result.exception)
    return result.exit_code, crash, data


def test_a_name_holding_nul_is_read_as_json_reads_it_not_a_traceback(tmp_path: Path) -> None:
    code, crash, data = _ingest(tmp_path / "nul", b'"x\\u0000y": 1')
    assert crash == "" and code == 0
    twin_code, _, twin = _ingest(tmp_path / "plain", b"")
    assert twin_code == 0
    shown = []
    for folder in (data, twin):
        service = local_service(folder, "2016-01-01")
        try:
            shown.append(service.fetch("arxiv:0704.0002").model_dump())
        finally:
            service.close()
    assert shown[0] == shown[1]


def test_a_repeated_name_inside_a_nul_named_member_is_seen_as_json_sees_it() -> None:
    # json's view (loads_marking_repeats) is the reference: the object under "a\u0000" repeats "c"
    text = b'{"a": 1, "a\\u0000": {"c": 1, "c": 2}}'
    assert fastjson.loads_marking_repeats(text)[1]
    assert fastjson.repeats_a_name(text)
    assert not fastjson.repeats_a_name(b'{"x\\u0000y": {"c": 1}, "x": 2}')
