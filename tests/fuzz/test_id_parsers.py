"""Property tests (issue 13.2): every id parser turns any string into a result or a coded error, never a traceback.

Strings are drawn from all of Unicode, lone surrogates included (a JSON body can carry ``"\\udfff"``), and from
the shapes of real ids and URLs with hostile pieces spliced in (``[``, superscript digits, ``%`` escapes).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from frozen_search.adapters.arxiv import ids as arxiv_ids
from frozen_search.adapters.openalex import ids as openalex_ids
from frozen_search.adapters.stackexchange import ids as se_ids
from frozen_search.adapters.wikipedia import ids as wiki_ids
from frozen_search.config import Settings
from frozen_search.errors import FrozenSearchError
from frozen_search.registry import default_registry

SETTINGS = Settings.from_env({})
HOSTILE = ["[", "]", "%5B", "%", "²", "٣", "\udfff", "\ud800", "\x00", "\n", " ", ":", "//", "?", "#", "@",
           "..", "ℌ", "\u202e", "%ff", "%C0%AF", "\\"]
PREFIXES = ["wikipedia:", "arxiv:", "openalex:", "mathoverflow:", "math.stackexchange:", "doi:", "https://",
            "http://", "//", "en.wikipedia.org/wiki/", "https://en.wikipedia.org/w/index.php?oldid=",
            "https://en.wikipedia.org/w/index.php?title=Pear&oldid=", "https://arxiv.org/abs/",
            "https://mathoverflow.net/questions/", "https://math.stackexchange.com/a/", "https://openalex.org/W",
            "https://doi.org/", "https://[", "a", ""]
ANY_TEXT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=80)
SHAPED = st.builds(lambda prefix, pieces: prefix + "".join(pieces), st.sampled_from(PREFIXES),
                   st.lists(st.one_of(st.sampled_from(HOSTILE), st.text(max_size=6)), max_size=6))
REFS = st.one_of(ANY_TEXT, SHAPED)
CRAFTED = ["a%5B", "a[", "https://en.wikipedia.org/w/index.php?oldid=²", "wikipedia:\udfff", "wikipedia:\ud800",
           "https://[/x", "//[", "https://mathoverflow.net/questions/²", "arxiv:0704.0001v²", "arxiv:²",
           "https://arxiv.org/abs/%ff", "https://openalex.org/W²", "doi:10.1/\udfff", "https://a%5B.org/x"]
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _coded(call: Any) -> None:
    try:
        call()
    except FrozenSearchError as exc:
        assert exc.code and exc.message
        exc.message.encode("utf-8")  # a message must be printable and loggable: no lone surrogate


def _all(ref: str) -> None:
    _coded(lambda: wiki_ids.parse_reference(ref, "en.wikipedia.org", ("en.wikipedia.org",)))
    _coded(lambda: arxiv_ids.parse_reference(ref, SETTINGS))
    _coded(lambda: se_ids.parse_reference(ref, SETTINGS))
    _coded(lambda: openalex_ids.parse_reference(ref, SETTINGS))
    _coded(lambda: default_registry().parse_reference(ref, SETTINGS))
    for source in default_registry().sources:
        _coded(lambda source=source: source.parse_reference(ref, SETTINGS))


@pytest.mark.parametrize("ref", CRAFTED)
def test_the_crafted_ids_of_the_fuzz_run_are_coded_errors(ref: str) -> None:
    _all(ref)


@FAST
@given(REFS)
@example("a%5B")
@example("https://en.wikipedia.org/w/index.php?oldid=²")
@example("wikipedia:\udfff")
def test_every_id_parser_answers_any_string_with_a_result_or_a_coded_error(ref: str) -> None:
    _all(ref)


@FAST
@given(REFS)
def test_arxiv_ids_wikipedia_titles_and_dois_are_coded(text: str) -> None:
    _coded(lambda: arxiv_ids.parse_id(text))
    _coded(lambda: wiki_ids.normalize_title(text))
    _coded(lambda: openalex_ids.normalize_doi(text))
