"""The faster ingest paths (issue 15 item 1) give exactly what the plain ones give: states a worker process sends
already prepared (:class:`~frozen_search.adapters.documents.WireState`) store what the same states store, messages
written by orjson read back as json would read them, the single-scan author splitter splits as the old
character-by-character loop did, and a real arXiv snapshot read in a worker stores what one process stores."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest

from frozen_search.adapters.arxiv.ids import _without_affiliation_list, author_list
from frozen_search.adapters.arxiv.ingest import ingest_arxiv
from frozen_search.adapters.documents import (
    DocState,
    StateWriter,
    encode_states,
    read_message,
    wire_states,
    write_message,
)
from frozen_search.index import RevisionIndex
from frozen_search.store import Store, revision_json
from tests.conftest import realdata
from tests.cross_source.test_ingest_worker import _state, mixed_states, run, stored

_SEPARATOR = re.compile(r",\s*(?:and\s+)?|\s+and\s+|\s*;\s*")


def _author_list_by_characters(authors: str) -> list[str]:
    """The splitter as it was before the single-scan rewrite: a separator tried at each position outside
    parentheses."""
    names: list[str] = []
    depth, start = 0, 0
    text = _without_affiliation_list(_clean_by_splitting(authors))
    position = 0
    while position < len(text):
        char = text[position]
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            found = _SEPARATOR.match(text, position)
            if found is not None and found.end() > position:
                names.append(text[start:position])
                start = position = found.end()
                continue
        position += 1
    names.append(text[start:])
    return [name.strip() for name in names if name.strip()]


def _clean_by_splitting(value: str | None) -> str:
    """``clean`` written out (the splitter's fast path must not depend on it)."""
    return " ".join((value or "").split())


def test_the_author_splitter_splits_as_the_character_loop_did() -> None:
    rng = random.Random(15)
    pieces = ["A", "b", " ", "  ", ",", ", ", ";", " ; ", "and", " and ", "and ", "(", ")", "((1) X, (2) Y)", "\t",
              "Smith", "J.", "(MIT, Cambridge)", "sand", "andy", ",and", ")and(", "and\n", "\u2003", " ,", ",,"]
    samples = ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(20_000)]
    samples += ["".join(rng.choice(pieces[:8] + pieces[15:18]) for _ in range(rng.randint(0, 14)))  # commas only
                for _ in range(20_000)]
    real = realdata("arxiv", "snapshot", "kaggle_arxiv-metadata-oai-snapshot_0704.0001-0704.0200.jsonl")
    samples += re.findall(r'"authors": ?"((?:[^"\\]|\\.)*)"', real.read_text(encoding="utf-8"))
    differing = [s for s in samples if author_list(s) != _author_list_by_characters(s)]
    assert differing == []
    assert author_list("A. Smith (MIT, Cambridge) and B. Jones; C (1), D") == \
        ["A. Smith (MIT, Cambridge)", "B. Jones", "C (1)", "D"]


def test_revision_json_is_json_dumps_with_sorted_keys() -> None:
    values: list[Any] = [{"b": [1, 2.5, float("nan"), float("inf"), -0.0, 2 ** 70, None, True], "a": "é\u2028\x7f\"\\",
                          "c": {"z": {}, "y": [], "\ud83d": "\U0001f600"}}, "text", 3, 1e-300, [], {}, None,
                         {"display": {"title": "Ünïcode", "authors": ["A", "B"]}, "dated": [["v", 1]]}]
    for value in values:
        assert revision_json(value) == json.dumps(value, sort_keys=True)
    with pytest.raises(TypeError):
        revision_json({"a": object()})


def _mixed() -> tuple[list[DocState], list[DocState]]:
    return mixed_states(display={"é": ["ü\u2028", 2 ** 70, None, 1.5]}, provenance={"file": "ß", "n": 1})


def _write(data: Path, first: list[DocState], batch: list[Any]) -> tuple[int, int, int]:
    store, index = Store(data / "store.sqlite3"), RevisionIndex.create(data / "index")
    try:
        with index.writer() as writer:
            with store.transaction():
                state_writer = StateWriter(store, writer)
                state_writer.write(first)
                state_writer.write_bulk(batch)
            writer.commit(store.bump_generation())
    finally:
        store.close()
    return state_writer.revisions, state_writer.duplicates, RevisionIndex.open(data / "index").document_count()


def test_states_sent_prepared_store_exactly_what_the_states_store(tmp_path: Path) -> None:
    """Fresh documents take the prepared path (JSON columns encoded in the worker), the others go back to
    DocStates through write: rows, chunks, aliases, counts and index are those of the DocStates themselves."""
    first, batch = _mixed()
    out = io.BytesIO()
    write_message(out, {**encode_states([(0, batch)], prepared=True), "done": True}, floatless=True)
    message = read_message(io.BytesIO(out.getvalue()), "test worker")
    assert message is not None
    wired = [state for _, states in wire_states(message) for state in states]
    assert [w.state() for w in wired] == batch
    expected = _write(tmp_path / "plain", first, batch)
    found = _write(tmp_path / "wired", first, wired)
    assert found == expected and expected[0] > 10
    assert stored(tmp_path / "wired") == stored(tmp_path / "plain")


def test_a_message_orjson_cannot_write_is_written_by_json_and_read_back_the_same() -> None:
    for message in ({"n": 2 ** 70, "digits": "1" * 25, "done": True},
                    {"text": "é\u2028\x00", "n": [10 ** 18, -1], "done": False}):
        for floatless in (False, True):
            out = io.BytesIO()
            write_message(out, message, floatless=floatless)
            assert read_message(io.BytesIO(out.getvalue()), "test worker") == message
    out = io.BytesIO()
    write_message(out, {"n": [float("nan"), 1.5, -0.0, float("inf")]})  # not floatless: json writes them
    found = read_message(io.BytesIO(out.getvalue()), "test worker")
    assert found is not None and found["n"][0] != found["n"][0] and found["n"][1:] == [1.5, -0.0, float("inf")]


def test_a_not_a_number_in_a_state_is_stored_as_the_plain_path_stores_it(tmp_path: Path) -> None:
    """Display and provenance travel as their stored JSON, never as orjson floats (which turn NaN into null):
    a state stored before (the slow path, DocStates read back) and a new one store what the DocStates store."""
    first = [_state("arxiv:1", "v1", 1_000)]
    batch = [_state("arxiv:1", "v2", 2_000, "v1", display={"x": float("nan")}, provenance={"y": float("inf")}),
             _state("arxiv:5", "v1", 2_000, display={"x": float("nan")}, provenance={"y": float("-inf")})]
    out = io.BytesIO()
    write_message(out, {**encode_states([(0, batch)], prepared=True), "done": True}, floatless=True)
    message = read_message(io.BytesIO(out.getvalue()), "test worker")
    assert message is not None
    wired = [state for _, states in wire_states(message) for state in states]
    assert _write(tmp_path / "wired", first, wired) == _write(tmp_path / "plain", first, batch)
    rows = stored(tmp_path / "wired")
    assert rows == stored(tmp_path / "plain")
    assert any("NaN" in str(row) for row in rows) and not any("null" in str(row) for row in rows)


def test_a_real_arxiv_snapshot_read_in_a_worker_stores_exactly_what_one_process_stores(tmp_path: Path) -> None:
    path = realdata("arxiv", "snapshot", "kaggle_arxiv-metadata-oai-snapshot_0704.0001-0704.0200.jsonl")
    one = run(ingest_arxiv, [path], tmp_path / "one", parallel=False)
    two = run(ingest_arxiv, [path], tmp_path / "two", parallel=True)
    assert (one.documents, one.revisions, one.problems) == (two.documents, two.revisions, two.problems)
    assert one.revisions > 200
    assert stored(tmp_path / "one") == stored(tmp_path / "two")


def test_json_lines_read_in_large_blocks_are_the_lines_iteration_gives(tmp_path: Path) -> None:
    import gzip

    from frozen_search.adapters.openalex import ingest as openalex_ingest

    rng = random.Random(7)
    texts = [b"", b"\n", b"a", b"a\n", b"\n\n\nb", b'{"x": 1}\n' * 3 + b'{"y":', b"x" * 50 + b"\n" + b"y" * 130]
    texts += [b"".join(rng.choice([b"ab", b"\n", b"c" * rng.randint(0, 90), b"\r\n"]) for _ in range(60))
              for _ in range(200)]
    for number, text in enumerate(texts):
        path = tmp_path / f"{number}.gz"
        with gzip.open(path, "wb") as out:
            out.write(text)
        for size in (1, 7, 64, 1 << 20):
            openalex_ingest.READ_BYTES = size
            try:
                with gzip.open(path, "rb") as one, gzip.open(path, "rb") as two:
                    assert list(openalex_ingest.lines_of(one)) == list(two), (text, size)
            finally:
                openalex_ingest.READ_BYTES = 1 << 20


def test_the_abstract_fast_path_rebuilds_what_the_checked_one_rebuilds() -> None:
    """Well-formed indexes (fast path) and every kind of fault (missing, doubled, negative, bool, float, not a
    list): the same text or the same reason."""
    from frozen_search.adapters.openalex.ids import _rebuild_checked, rebuild_abstract

    rng = random.Random(3)
    vocabulary = ["Abstract", "the", "$\\mathbb", "{Q}$", "a&amp;b", "x\\\\ny", "&#13;\\n", "<mml:math>1</mml:math>"]
    tried = 0
    for _ in range(5_000):
        length = rng.randint(0, 12)
        positions = list(range(length))
        rng.shuffle(positions)
        index: dict[str, Any] = {}
        for position in positions:
            index.setdefault(rng.choice(vocabulary) + str(rng.randint(0, 3)), []).append(position)
        fault = rng.randint(0, 7)
        key = next(iter(index), "w")
        if fault == 1 and index:
            index[key].append(rng.choice(positions))  # a position held twice
        elif fault == 2 and index:
            index[key].append(length + 3)  # a gap
        elif fault == 3:
            index[key] = [*index.get(key, []), -1]
        elif fault == 4:
            index[key] = [True]
        elif fault == 5:
            index[key] = [1.0]
        elif fault == 6:
            index[key] = (0,)
        assert rebuild_abstract(index) == _rebuild_checked(index), index
        tried += 1
    assert tried == 5_000
    assert rebuild_abstract({"b": [1], "a": [0, 2]}) == ("a b a", None)
    assert rebuild_abstract({"b": [1], "a": [0, 1]})[1] == "position 1 of abstract_inverted_index holds two words"


def test_oai_records_are_numbered_as_before_also_when_several_start_on_one_line(tmp_path: Path) -> None:
    """Processed records are dropped from the parsed tree and their start lines forgotten (memory flat in the
    file's size); a problem still names each record by the number it always had: the count of distinct record start
    lines so far, plus one on a line seen before (records joined on one line)."""
    from lxml import etree

    from frozen_search.adapters.arxiv.ingest import OAI

    text = realdata("arxiv", "oai", "litpuvn_ListRecords_arXivRaw_from2016-10-20.xml").read_text(encoding="utf-8")
    records = re.findall(r"<record>.*?</record>", text, re.DOTALL)
    head, tail = text[:text.index("<record>")], text[text.rindex("</record>") + len("</record>"):]
    picked = [re.sub(r"<date>[^<]*</date>", "<date>sometime</date>", r, count=1) if n in (1, 2, 4, 7) else r
              for n, r in enumerate(records[:9])]
    one_line = [" ".join(r.split("\n")) for r in picked[:4]]  # four records on one line, the rest as they were
    path = tmp_path / "ListRecords.xml"
    path.write_text(head + "".join(one_line) + "\n" + "\n".join(picked[4:]) + tail, encoding="utf-8")
    numbers: dict[int, int] = {}
    expected = []
    for event, element in etree.iterparse(str(path), events=("start", "end"), tag=f"{{{OAI}}}record"):
        if event == "start":
            numbers[element.sourceline] = len(numbers) + 1  # the numbering as it was
        else:
            expected.append(numbers[element.sourceline])
    store = Store(tmp_path / "store.sqlite3")
    try:
        report = ingest_arxiv([path], store, RevisionIndex.create(tmp_path / "index"))
    finally:
        store.close()
    found = [int(re.match(r".*?: record (\d+) ", p).group(1)) for p in report.problems]  # type: ignore[union-attr]
    assert found == [expected[n] for n in (1, 2, 4, 7)] == [2, 2, 2, 5]
    assert report.documents == 5


def test_dated_entries_and_urls_written_directly_are_what_the_encoder_writes() -> None:
    # _stored_json writes a (str, int) dated entry and a str url itself, with the string escape the C encoder
    # calls: random strings (controls, quotes, backslashes, non-ASCII, astral, lone surrogates) and integers
    # (negative, past 64 bits); a bool or a float instant takes the encoder's own path
    rng = random.Random(15)
    alphabet = ['"', "\\", "/", "\x00", "\x1f", "\x7f", "\u00e9", "\u2028", "\ud800", "\U0001f600", "a", " ", "\n"]
    for round_ in range(3_000):
        what = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        at: Any = rng.choice([rng.randint(-10 ** 6, 10 ** 6), 2 ** 70 + round_, True, False, 0.5, 10 ** 18])
        url = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        state = DocState(doc_id="arxiv:1", source="arxiv", version="v1", valid_from=1_000, title="T", url=url,
                         parts=("a",), dated=((what, at), ("v1", 5)), display={"k": what},
                         provenance={"file": what})
        message = encode_states([(0, [state])], prepared=True)
        fields = message["threads"][0][1][0]
        assert fields[-2] == json.dumps(
            {"url": url, "dated": [[what, at], ["v1", 5]], "display": {"k": what}}, sort_keys=True)
        assert fields[-1] == json.dumps({"file": what}, sort_keys=True)


def test_the_collector_is_set_back_as_it_was_after_an_ingest_also_a_failed_one(tmp_path: Path) -> None:
    import gc

    from frozen_search.errors import IngestError

    before = gc.get_threshold(), gc.get_freeze_count()
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1}\n')  # no record readable: the ingest fails
    good = realdata("arxiv", "snapshot", "kaggle_arxiv-metadata-oai-snapshot_0704.0001-0704.0200.jsonl")
    for name, path in (("good", good), ("bad", bad)):
        store = Store(tmp_path / name / "store.sqlite3")
        try:
            ingest_arxiv([path], store, RevisionIndex.create(tmp_path / name / "index"), parallel=False)
        except IngestError:
            assert name == "bad"
        finally:
            store.close()
        assert (gc.get_threshold(), gc.get_freeze_count()) == before
