"""The pipe to a Wikipedia render process: batches framed as length-prefixed UTF-8, answered in order."""

from __future__ import annotations

import io

import pytest

from frozen_search.adapters.wikipedia import wikitext
from frozen_search.adapters.wikipedia.render_pipe import FAILED, FramingError, encode_batch, read_batch, serve


def test_batches_are_answered_in_order_with_the_renderings() -> None:
    batches = [["''bold'' text\n\n", "== Heading ==\n"], [], ["a \ud800 lone surrogate, é, 🍐"]]
    out = io.BytesIO()
    serve(io.BytesIO(b"".join(encode_batch(batch) for batch in batches)), out)
    out.seek(0)
    replies = [read_batch(out) for _ in batches]
    # Two strings per source: its rendering, then what that rendering did with its templates.
    assert replies == [(2 * len(batch), wikitext.render_chunk_batch(batch)) for batch in batches]
    assert replies[0] is not None and replies[0][1][1::2] == ["0 0 0 0", "0 0 0 0"]
    assert read_batch(out) is None


def test_a_batch_the_renderer_fails_on_is_answered_as_failed(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(sources: list[str]) -> list[str]:
        raise RecursionError("too deep")

    monkeypatch.setattr(wikitext, "render_chunk_batch", broken)
    out = io.BytesIO()
    serve(io.BytesIO(encode_batch(["x"])), out)
    out.seek(0)
    assert read_batch(out) == (FAILED, ["RecursionError: too deep"])


@pytest.mark.parametrize("cut", [2, 6, 9])
def test_a_pipe_ending_inside_a_batch_is_a_framing_error(cut: int) -> None:
    data = encode_batch(["abc", "def"])
    with pytest.raises(FramingError):
        read_batch(io.BytesIO(data[:cut]))
    with pytest.raises(FramingError):
        read_batch(io.BytesIO(data[:4] + b"\x00\x00\x00\x02\xff\xfe" + data[10:]))
