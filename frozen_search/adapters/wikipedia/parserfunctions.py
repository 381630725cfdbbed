"""MediaWiki's pure parser functions and time formatting, evaluated at a given instant (never the clock).

Follows ParserFunctions (``#expr``/``#ifexpr``: ``ExprParser.php``; ``#time``: ``ParserFunctions::time`` over
PHP's ``date()`` codes) and CoreParserFunctions (``lc``, ``uc``, ``padleft``, ``formatnum``, …) as of MediaWiki
1.39. No I/O: every function is a function of its arguments (and of the instant ``now`` it is given).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from dateutil import parser as dateutil_parser

__all__ = ["ExprError", "evaluate", "format_number", "format_time", "numeric_equal", "time_function"]

_MONTHS = ("January February March April May June July August September October November December").split()
_DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()
_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+))|(?P<word>[a-z]+)|(?P<op><>|!=|<=|>=|[-+*/^()=<>]))",
                    re.IGNORECASE)
_FUNCS: dict[str, Callable[[float], float]] = {
    "exp": math.exp, "ln": math.log, "abs": abs, "trunc": math.trunc, "floor": math.floor, "ceil": math.ceil,
          "sin": math.sin, "cos": math.cos, "tan": math.tan, "asin": math.asin, "acos": math.acos, "atan": math.atan,
          "sqrt": math.sqrt}
# Binary operators, lowest precedence first (ExprParser: or, and, comparisons, round, + -, * / div mod fmod, ^, e).
_MAX_EXPONENT = 308  # no finite float is 10 ** 309 or more: rounding to a coarser place gives 0
_LEVELS: tuple[tuple[str, ...], ...] = (("or",), ("and",), ("=", "<>", "!=", "<", ">", "<=", ">="), ("round",),
                                        ("+", "-"), ("*", "/", "div", "mod", "fmod"), ("^",), ("e",))


class ExprError(Exception):
    """An expression MediaWiki's ``#expr`` refuses; the message is ExprParser's (``Expression error: …``)."""


def _binary(op: str, a: float, b: float) -> float:
    try:
        if op == "or":
            return float(bool(a) or bool(b))
        if op == "and":
            return float(bool(a) and bool(b))
        if op == "=":
            return float(a == b)
        if op in ("<>", "!="):
            return float(a != b)
        if op == "<":
            return float(a < b)
        if op == ">":
            return float(a > b)
        if op == "<=":
            return float(a <= b)
        if op == ">=":
            return float(a >= b)
        if op == "round":
            digits = int(b)
            if digits < -_MAX_EXPONENT:  # PHP's round gives 0; 10 ** -digits was a number of -digits digits, made
                return 0.0  # in time quadratic in it (``1 round -1e9`` never ended; audit 3)
            return float(round(a, digits)) if digits >= 0 else float(round(a / 10 ** -digits) * 10 ** -digits)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op in ("/", "div"):
            if b == 0:
                raise ExprError("Division by zero.")
            return a / b
        if op in ("mod", "fmod"):
            if op == "mod":
                a, b = float(int(a)), float(int(b))
            if b == 0:
                raise ExprError("Division by zero.")
            return math.fmod(a, b)
        if op == "^":
            return float(math.pow(a, b))
        if op == "e":
            return a * math.pow(10.0, b)
    except (OverflowError, ValueError, ZeroDivisionError) as exc:
        raise ExprError("Invalid argument for operator " + op + ".") from exc
    raise ExprError(f'Unrecognized word "{op}".')  # pragma: no cover - every level's operator is handled


class _Expr:
    """A precedence-climbing reader of one ``#expr`` expression (ExprParser's grammar, as a recursive descent)."""

    def __init__(self, text: str) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos, text = 0, text.replace("\u2212", "-")
        while pos < len(text):
            match = _TOKEN.match(text, pos)
            if match is None or match.end() == pos:
                if text[pos:].strip() == "":
                    break
                raise ExprError(f'Unrecognized punctuation character "{text[pos:].strip()[:1]}".')
            pos = match.end()
            if match["num"] is not None:
                self.tokens.append(("num", match["num"]))
            elif match["word"] is not None:
                self.tokens.append(("word", match["word"].lower()))
            else:
                self.tokens.append(("op", match["op"]))
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos][1] if self.pos < len(self.tokens) else None

    def level(self, depth: int) -> float:
        if depth == len(_LEVELS):
            return self.unary()
        value = self.level(depth + 1)
        while self.peek() in _LEVELS[depth]:
            op = self.tokens[self.pos][1]
            self.pos += 1
            right = self.level(depth + 1) if op != "^" else self.level(depth)  # ^ is right-associative
            value = _binary(op, value, right)
        return value

    def unary(self) -> float:
        token = self.peek()
        if token is None:
            raise ExprError("Missing operand.")
        kind, text = self.tokens[self.pos]
        self.pos += 1
        if kind == "num":
            return float(text)
        if text == "(":
            value = self.level(0)
            if self.peek() != ")":
                raise ExprError("Unexpected closing bracket." if self.peek() else "Unclosed bracket.")
            self.pos += 1
            return value
        if text == "-":
            return -self.unary()
        if text == "+":
            return self.unary()
        if text == "not":
            return float(not self.unary())
        if text == "pi":
            return math.pi
        if text == "e":
            return math.e
        if text in _FUNCS:
            argument = self.unary()
            try:
                return float(_FUNCS[text](argument))
            except (ValueError, OverflowError) as exc:
                raise ExprError(f"Invalid argument for {text}.") from exc
        if kind == "word":
            raise ExprError(f'Unrecognized word "{text}".')
        raise ExprError(f"Unexpected {text} operator.")


def evaluate(expression: str) -> float | None:
    """The value of a ``#expr`` expression (``None`` for an empty one, which ``#expr`` shows as nothing).

    Raises:
        ExprError: a malformed expression, a division by zero, an unknown word.
    """
    reader = _Expr(expression)
    if not reader.tokens:
        return None
    value = reader.level(0)
    if reader.pos != len(reader.tokens):
        raise ExprError(f"Unexpected {reader.tokens[reader.pos][1]} operator." if reader.tokens[reader.pos][0]
                        == "op" else "Unexpected number.")
    return value


def format_number(value: float) -> str:
    """A number as PHP prints a float with ``precision=14`` (``6``, ``0.33333333333333``, ``1.0E+20``, ``INF``)."""
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    text = f"{value:.14G}"
    if "E" in text:
        mantissa, exponent = text.split("E")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{mantissa}E{exponent[0]}{int(exponent[1:])}"
    return text


def numeric_equal(a: str, b: str) -> bool:
    """``#ifeq``/``#switch`` equality: numeric when both sides are numbers (``01`` = ``1``), else as strings."""
    try:
        return float(a) == float(b)
    except ValueError:
        return a == b


def format_time(form: str, when: datetime) -> str:
    """PHP ``date()`` codes of ``form`` at ``when`` (UTC), as ``{{#time}}`` formats: ``Y y n m M F j d D l N w z
    W t L H G h g i s A a U c``; ``\\x`` and ``"text"`` are literal; other characters are themselves."""
    out: list[str] = []
    pos = 0
    while pos < len(form):
        char = form[pos]
        pos += 1
        if char == "\\" and pos < len(form):
            out.append(form[pos])
            pos += 1
        elif char == '"':
            end = form.find('"', pos)
            if end < 0:
                out.append('"')
            else:
                out.append(form[pos:end])
                pos = end + 1
        else:
            out.append(_time_code(char, when))
    return "".join(out)


def _time_code(char: str, when: datetime) -> str:
    codes: dict[str, Callable[[], str]] = {
        "Y": lambda: str(when.year), "y": lambda: f"{when.year % 100:02d}", "n": lambda: str(when.month),
        "m": lambda: f"{when.month:02d}", "M": lambda: _MONTHS[when.month - 1][:3],
        "F": lambda: _MONTHS[when.month - 1],
        "j": lambda: str(when.day), "d": lambda: f"{when.day:02d}", "D": lambda: _DAYS[when.weekday()][:3],
        "l": lambda: _DAYS[when.weekday()], "N": lambda: str(when.isoweekday()),
        "w": lambda: str(when.isoweekday() % 7),
        "z": lambda: str(when.timetuple().tm_yday - 1), "W": lambda: f"{when.isocalendar()[1]:02d}",
        "t": lambda: str(((when.replace(day=28) + timedelta(days=4)).replace(day=1) - timedelta(days=1)).day),
        "L": lambda: str(int(when.year % 4 == 0 and (when.year % 100 != 0 or when.year % 400 == 0))),
        "H": lambda: f"{when.hour:02d}", "G": lambda: str(when.hour), "h": lambda: f"{(when.hour % 12) or 12:02d}",
        "g": lambda: str((when.hour % 12) or 12), "i": lambda: f"{when.minute:02d}", "s": lambda: f"{when.second:02d}",
        "A": lambda: "AM" if when.hour < 12 else "PM", "a": lambda: "am" if when.hour < 12 else "pm",
        "U": lambda: str(int(when.timestamp())), "c": lambda: when.strftime("%Y-%m-%dT%H:%M:%S+00:00"),
    }
    found = codes.get(char)
    return found() if found is not None else char


def time_function(form: str, date: str, now: datetime) -> str | None:
    """``{{#time:form|date}}`` evaluated at ``now`` (a UTC instant standing for the clock): ``date`` empty or
    ``now`` is ``now``; an absolute date is read with dateutil (missing fields from ``now``); a relative phrase
    (``+1 day``, ``yesterday``) is not read: ``None`` (the caller shows MediaWiki's error)."""
    text = date.strip()
    if text == "" or text.lower() == "now":
        return format_time(form, now)
    if re.search(r"[+]|\b(?:ago|next|last|yesterday|tomorrow|today|day|week|month|year)s?\b", text, re.IGNORECASE):
        return None
    try:
        parsed = dateutil_parser.parse(text, default=now.replace(tzinfo=None))
    except (ValueError, OverflowError):
        return None
    parsed = parsed.astimezone(UTC) if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    return format_time(form, parsed)
