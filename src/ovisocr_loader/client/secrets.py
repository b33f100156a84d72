"""Keep the client's own secrets out of whatever a server says back.

A server may echo the key it was sent (``Incorrect API key provided: Bearer
sk-...``); its error text then becomes an exception message, a page's error
record in ``.md``/``.json`` outputs, a log line. :class:`Secrets` rewrites such
text at the one boundary where server answers become our errors, before
anything can log or store it.
"""

from __future__ import annotations

import re
import urllib.parse

from ..errors import OvisLoaderError

REDACTED = "[redacted]"
#: A bearer credential in any text, whoever's it is.
_BEARER = re.compile(r"(?i)\b(bearer)\s+[^\s'\",;}]+")
#: Shorter values are too common to be secrets ("EMPTY" is what is sent without a key).
_MIN_SECRET = 6


class Secrets:
    """The values to hide: the API key, in every form a server may echo it."""

    def __init__(self, *values: str | None) -> None:
        found = {v for v in values if v and len(v) >= _MIN_SECRET and v != "EMPTY"}
        found |= {urllib.parse.quote(v, safe="") for v in found}
        self.values = tuple(sorted(found, key=len, reverse=True))

    def redact(self, text: str, *, bearer: bool = True) -> str:
        """``text`` with every secret replaced by ``[redacted]``, and (``bearer``) any bearer
        credential: in an error message; not in a page's text, where "bearer bonds" is
        what the page says."""
        for value in self.values:
            text = text.replace(value, REDACTED)
        return _BEARER.sub(rf"\1 {REDACTED}", text) if bearer else text

    def scrub(self, error: OvisLoaderError) -> OvisLoaderError:
        """Redact ``error``'s message in place; detach the library error it was raised
        from (its text holds the server's words unredacted). Returns ``error``."""
        error.args = tuple(self.redact(a) if isinstance(a, str) else a for a in error.args)
        error.reason = self.redact(error.reason)
        error.__cause__ = None
        error.__suppress_context__ = True
        return error
