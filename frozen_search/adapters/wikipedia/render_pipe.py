"""The pipe between a Wikipedia ingest and its render processes
(``python -m frozen_search.adapters.wikipedia.render_worker``, which runs :func:`serve`).

A render process reads batches of chunk sources on stdin and writes their renderings
(:func:`~frozen_search.adapters.wikipedia.wikitext.render_chunk_batch`: two strings per source, its text then what it
did with its templates) on stdout, in order, until stdin ends. It is
started through this module entry point, never by :mod:`multiprocessing`: a user's script that calls
``ingest_wikipedia`` without an ``if __name__ == "__main__":`` guard is not imported (so not run) again in it.

Framing (no pickle, nothing executable): a batch is a 4-byte big-endian count ``N``, then ``N`` strings, each a
4-byte big-endian length and that many bytes of UTF-8 (``surrogatepass``). A reply has the same shape; a batch the
renderer failed on is answered with the count :data:`FAILED` and one string, the error (the caller renders that
batch itself, so it meets the same error).
"""

from __future__ import annotations

import struct
from typing import IO

FAILED = 0xFFFFFFFF
_SIZE = struct.Struct(">I")


class FramingError(OSError):
    """The other end closed the pipe inside a batch, or sent bytes that are not a batch."""


def encode_batch(texts: list[str], count: int | None = None) -> bytes:
    """``texts`` framed as one batch (``count`` instead of ``len(texts)``: the failure marker)."""
    parts = [_SIZE.pack(len(texts) if count is None else count)]
    for text in texts:
        data = text.encode("utf-8", "surrogatepass")
        parts += (_SIZE.pack(len(data)), data)
    return b"".join(parts)


def _exactly(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise FramingError(f"the pipe ended inside a batch ({len(data)} of {size} bytes)")
    return data


def read_batch(stream: IO[bytes]) -> tuple[int, list[str]] | None:
    """The next batch on ``stream`` as ``(count, texts)`` (``count`` is :data:`FAILED` for a failure, with the
    error as its one text), or ``None`` at a clean end of the stream.

    Raises:
        FramingError: the stream ended inside a batch or holds bytes that are not UTF-8.
    """
    head = stream.read(_SIZE.size)
    if not head:
        return None
    if len(head) != _SIZE.size:
        raise FramingError("the pipe ended inside a batch header")
    (count,) = _SIZE.unpack(head)
    texts: list[str] = []
    try:
        for _ in range(1 if count == FAILED else count):
            (size,) = _SIZE.unpack(_exactly(stream, _SIZE.size))
            texts.append(_exactly(stream, size).decode("utf-8", "surrogatepass"))
    except UnicodeDecodeError as exc:
        raise FramingError(f"a batch holds bytes that are not UTF-8: {exc}") from exc
    return count, texts


def serve(source: IO[bytes], sink: IO[bytes]) -> None:
    """Answer every batch read from ``source`` on ``sink`` until ``source`` ends."""
    from frozen_search.adapters.wikipedia.wikitext import render_chunk_batch

    while (batch := read_batch(source)) is not None:
        try:
            reply = encode_batch(render_chunk_batch(batch[1]))
        except Exception as exc:  # noqa: BLE001 - handed back: the caller renders the batch itself and meets it
            reply = encode_batch([f"{type(exc).__name__}: {exc}"], FAILED)
        sink.write(reply)
        sink.flush()
