"""Wikipedia formatting templates whose output is a function of their arguments alone: a table, as data.

When a template's own text at ``T`` is not available (a page-only dump, a template created after ``T``, a failed
expansion), the templates named here are rendered from the revision's own arguments (issue 12, item 2): the
arguments are the revision's text, so nothing later than the revision enters. Every other template is stripped.
Pure data and one pure lookup: no I/O, no clock.

Each entry maps a template name (normalized by :func:`template_key`) to a :class:`Rule`:

- ``kind="text"``: the constant ``text`` (``{{pi}}`` -> ``π``);
- ``kind="wrap"``: ``before`` + the argument ``arg`` rendered + ``after`` (``{{abs|x}}`` -> ``|x|``; ``arg`` is a
  positional number or a name, ``"1"`` by default); ``joiner`` set: every positional argument from ``arg`` on,
  joined by it (``{{bra-ket|a|b}}`` -> ``⟨a|b⟩``);
- ``kind="frac"``: ``{{frac|b}}`` -> ``1/b``, ``{{frac|a|b}}`` -> ``a/b``, ``{{frac|n|a|b}}`` -> ``n a/b``;
- ``kind="val"``: ``{{val|6.2415093|e=18}}`` -> ``6.2415093×10^18``, ``{{val|1.5|0.2}}`` -> ``1.5±0.2``,
  ``{{val|1.00794|(7)}}`` -> ``1.00794(7)``, ``{{val|1|+0.2|-0.1}}`` -> ``1+0.2-0.1``, a unit (``u=``/``ul=``,
  ``up=``/``upl=`` after ``/``) after a space;
- ``kind="named"``: the named arguments ``names`` that are present, in order, rendered and separated by ``joiner``
  (``{{math theorem|name=Theorem|math_statement=…}}`` -> ``Theorem: …``);
- ``kind="numblk"``: ``{{NumBlk|:|formula|(1)}}`` -> ``formula (1)``;
- ``kind="convert"``: the quantity as written, without the conversion (which needs the template's module):
  ``{{convert|149597870700|m|mi}}`` -> ``149597870700 m``, ``{{convert|1|to|2|km}}`` -> ``1 to 2 km``.

What the rendered MediaWiki output shows of each template was read from the templates' documentation on
en.wikipedia.org (Template:Math, Template:Mvar, Template:Val, Template:Frac, Template:Sfrac, Template:Overline,
Template:EquationRef, Template:NumBlk, Template:Bra-ket); typographic effects (italics, overlines, small capitals)
have no plain-text form and are dropped, as the renderer drops bold and italics.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ARGUMENT_TEMPLATES", "Rule", "rule_for", "template_key"]


@dataclass(frozen=True)
class Rule:
    """How one template renders from its arguments (module docstring): ``kind`` and its parameters."""

    kind: str
    arg: str = "1"
    before: str = ""
    after: str = ""
    text: str = ""
    joiner: str | None = None
    names: tuple[str, ...] = ()


def _wrap(before: str = "", after: str = "", arg: str = "1", joiner: str | None = None) -> Rule:
    return Rule("wrap", arg=arg, before=before, after=after, joiner=joiner)


def _text(text: str) -> Rule:
    return Rule("text", text=text)


_FIRST = _wrap()  # the first argument as it reads

ARGUMENT_TEMPLATES: dict[str, Rule] = {
    # formulas in running text
    "Math": _FIRST, "Mvar": _FIRST, "Tmath": _FIRST, "Var": _FIRST, "Bigmath": _FIRST, "Mathcal": _FIRST,
    "Mathbf": _FIRST, "Mathsf": _FIRST, "Mathfrak": _FIRST, "Nowrap": _FIRST, "Nobr": _FIRST, "Nobreak": _FIRST,
    "Overline": _FIRST, "Underline": _FIRST, "Overarc": _FIRST, "Sub": _FIRST, "Sup": _FIRST, "Italic": _FIRST,
    "Em": _FIRST, "Strong": _FIRST, "Small": _FIRST, "Smallcaps": _FIRST, "Sc": _FIRST, "Serif": _FIRST,
    "Math-num": _FIRST, "Vec": _FIRST, "Mathematical notation": _FIRST,
    "Abs": _wrap("|", "|"), "Norm": _wrap("‖", "‖"), "Mset": _wrap("{", "}"), "Set": _wrap("{", "}"),
    "Angbr": _wrap("⟨", "⟩"), "Ceil": _wrap("⌈", "⌉"), "Floor": _wrap("⌊", "⌋"), "Radic": _wrap("√"),
    "Sqrt": _wrap("√"), "Bra": _wrap("⟨", "|"), "Ket": _wrap("|", "⟩"), "Braket": _wrap("⟨", "⟩", joiner="|"),
    "Bra-ket": _wrap("⟨", "⟩", joiner="|"), "Bra–ket": _wrap("⟨", "⟩", joiner="|"),
    "EquationRef": _wrap("(", ")"), "Equationref": _wrap("(", ")"), "EqRef": _wrap("(", ")"),
    "EquationNote": _wrap("(", ")"), "NumBlk": Rule("numblk"), "Numblk": Rule("numblk"),
    "Frac": Rule("frac"), "Sfrac": Rule("frac"), "Fraction": Rule("frac"),
    "Val": Rule("val"), "Convert": Rule("convert"), "Cvt": Rule("convert"),
    "Math theorem": Rule("named", names=("name", "note", "math_statement"), joiner=": "),
    "Math proof": Rule("named", names=("title", "proof"), joiner=": "),
    # symbols
    "Pi": _text("π"), "Langle": _text("⟨"), "Rangle": _text("⟩"), "Ldots": _text("…"), "Cdots": _text("⋯"),
    "Times": _text("×"), "Mdash": _text("—"), "Ndash": _text("–"), "Snd": _text(" – "), "Spaced ndash": _text(" – "),
    "=": _text("="), "!": _text("|"), "Pipe": _text("|"), "!!": _text("||"), "Hair space": _text(" "),
    "Thin space": _text(" "), "Nbsp": _text(" "), "Sp": _text(" "), "Middot": _text("·"), "Dot": _text("·"),
    "Minus": _text("−"), "Plusminus": _text("±"), "Degree": _text("°"), "Prime": _wrap(after="′"),
    "Coprime": _text("⊥"), "Emptyset": _text("∅"), "Epsilon": _text("ε"), "Lambda": _text("λ"),
}


def template_key(name: str) -> str:
    """A template name as MediaWiki compares it on a first-letter wiki: ``Template:`` prefix dropped, underscores
    are spaces, runs of whitespace collapse, the first letter is upper case (``"template:math "`` -> ``"Math"``)."""
    text = " ".join(name.replace("_", " ").split())
    if text[:9].lower() == "template:":
        text = text[9:].lstrip()
    return text[:1].upper() + text[1:]


def rule_for(name: str) -> Rule | None:
    """The :class:`Rule` of template ``name`` (any spelling :func:`template_key` folds), or ``None`` when it is
    not rendered from its arguments (then it is stripped)."""
    return ARGUMENT_TEMPLATES.get(template_key(name))
