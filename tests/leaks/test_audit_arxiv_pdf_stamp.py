"""Audit of arXiv live full text: the stamp arXiv prints on page 1 of every PDF it builds.

arXiv writes ``arXiv:<id>v<k>  [<primary category>]  <date of version k>`` in the left margin of page 1 when it
builds (and rebuilds) a PDF, so the category is the one the paper has *then*, i.e. today's: 0704.0394 (one version,
2007-04-03) reads ``q-fin.RM`` today, an archive opened in December 2008 (tests/leaks/test_audit_arxiv_primary_
category.py). ``fetch`` in live mode shows version k's PDF text: the stamp's category is left out like the
primary category of the abstract page; the id and the version's own date stay.
"""

from __future__ import annotations

from frozen_search.adapters.arxiv.live import pdf_text
from tests.arxiv.test_arxiv_live import minimal_pdf


def test_the_stamp_category_is_left_out_of_the_pdf_text() -> None:
    text = pdf_text(minimal_pdf("arXiv:0704.0394v1  [q-fin.RM]  3 Apr 2007"))
    assert text is not None and "q-fin" not in text
    assert "arXiv:0704.0394v1" in text and "3 Apr 2007" in text


def test_old_style_ids_and_plain_brackets_elsewhere() -> None:
    text = pdf_text(minimal_pdf("arXiv:math/0202001v2 [math.GT] 1 Feb 2002 see [12] and [Smith]"))
    assert text is not None and "math.GT" not in text and "[12] and [Smith]" in text
