"""Audit 9: a bundle's tar header before its manifest was read whole, unbounded.

``import`` bounds what a bundle decompresses to by its manifest (the first member): every member's listed size, a
header allowance per member, and at most :data:`~frozen_search.cache.bundle.MAX_EXPANSION` times the bundle's size.
But nothing bounded the bytes *before* the manifest is read: a PAX extended header on the manifest member (a
``comment`` record of any length: tarfile reads the whole header into memory before the member it describes) passed
unchecked, so a bundle of a few hundred KB made the importer inflate and hold gigabytes (and, since the header is
only a comment, the import then went on as if nothing happened). Fixed: until the manifest member's own header is
read, the stream may not decompress past a header allowance; then past the manifest's size (at most
``_MAX_MANIFEST_BYTES``); then the manifest's own bound applies.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path
from typing import Any

import pytest

from frozen_search.cache import bundle as bundle_module
from frozen_search.config import Settings
from frozen_search.errors import BundleInvalid
from frozen_search.ops.bundles import export_bundle, import_bundle
from tests.leaks.formats import ingested, stackexchange_dump

LIC = "CC BY-SA 4.0"
HUGE = 64 * 2**20  # the header's comment: 64 MiB (a real attack: gigabytes, from a bundle of a few MB)


def _bundle(root: Path) -> Path:
    posts = [{"Id": 100, "PostTypeId": 1, "CreationDate": "2025-01-01T00:00:00.000", "Score": 1, "ViewCount": 10,
              "Body": "<p>x</p>", "OwnerUserId": 7, "LastActivityDate": "2025-01-01T00:00:00.000", "Title": "t",
              "Tags": "<nt.number-theory>", "AnswerCount": 0, "CommentCount": 0, "ContentLicense": LIC}]
    history = [{"Id": 1000 + kind, "PostHistoryTypeId": kind, "PostId": 100,
                "RevisionGUID": f"00000000-0000-4000-8000-{kind:012d}", "CreationDate": "2025-01-01T00:00:00.000",
                "UserId": 7, "Text": text, "ContentLicense": LIC}
               for kind, text in ((2, "Is the Pellworth bound sharp?"), (1, "The Pellworth bound"),
                                  (3, "<nt.number-theory>"))]
    data = ingested(root / "data", "stackexchange", [stackexchange_dump(root / "mathoverflow.net", posts, history)],
                    site="mathoverflow.net")
    path = root / "data.tar.gz"
    export_bundle(Settings.from_env({}, data_dir=data), path)
    return path


def _rewritten(bundle: Path, target: Path, comment: int) -> Path:
    """``bundle`` written again member by member (the same bytes), its manifest member carrying a PAX ``comment``
    record of ``comment`` bytes (0: none)."""
    with tarfile.open(bundle, "r:gz") as tar:
        entries = [(info, tar.extractfile(info).read()) for info in tar]  # type: ignore[union-attr]
    with target.open("wb") as raw, gzip.GzipFile("", "wb", 6, raw, mtime=0) as packed, \
            tarfile.open(fileobj=packed, mode="w", format=tarfile.PAX_FORMAT) as out:
        for position, (info, data) in enumerate(entries):
            if position == 0 and comment:
                info.pax_headers = {"comment": "x" * comment}
            out.addfile(info, io.BytesIO(data))
    return target


def _import(bundle: Path, data_dir: Path) -> Any:
    data_dir.mkdir(parents=True)
    return import_bundle(bundle, Settings.from_env({}, data_dir=data_dir))


def test_a_huge_header_before_the_manifest_is_refused_early(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crafted = _rewritten(_bundle(tmp_path / "made"), tmp_path / "crafted.tar.gz", HUGE)
    assert crafted.stat().st_size < 2**20  # 64 MiB of header in under 1 MiB of bundle
    produced: list[int] = []
    real = bundle_module._OneGzipMember.readinto

    def counted(self: Any, buffer: Any) -> int:
        got = real(self, buffer)
        produced.append(self.produced)
        return got

    monkeypatch.setattr(bundle_module._OneGzipMember, "readinto", counted)
    with pytest.raises(BundleInvalid, match="before its manifest"):
        _import(crafted, tmp_path / "target")
    assert max(produced) < 8 * 2**20  # refused long before the header was inflated whole


def test_an_ordinary_bundle_still_imports(tmp_path: Path) -> None:
    """Not over-refused: the same bundle written again without the comment imports."""
    plain = _rewritten(_bundle(tmp_path / "made"), tmp_path / "plain.tar.gz", 0)
    manifest = _import(plain, tmp_path / "target")
    assert manifest.counts["dump_revisions"] == 1
