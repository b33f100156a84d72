"""The whole exception tree of ovisocr-loader.

::

    OvisLoaderError                    .file, .page when known
      SourceError                      bad input; the message names the file
        UnsupportedFormatError         not a PDF or a supported image
        CorruptFileError               the file (or one page of it) cannot be decoded
        PasswordRequiredError          encrypted PDF without (the right) password
        EmptyDocumentError             zero pages
      ServerError                      .url, .attempts
        ServerUnreachableError         fails fast; says how to start vLLM
        ServerConnectionError          refused or reset during a page (retried)
        ServerTimeoutError
          FirstTokenTimeout            nothing streamed within first_token_timeout
          PageTimeout                  the page took longer than page_timeout
        ServerStatusError              .status_code and the server's message
        ServerProtocolError            malformed JSON or SSE
      PageError                        errors="raise": a page still failing after retries

A page error recorded in a result (``PageResult.error.kind``) carries the name of
one of these classes, so ``errors="record"`` and ``errors="raise"`` speak one
vocabulary.
"""

from __future__ import annotations

from pathlib import Path


class OvisLoaderError(Exception):
    """Base of every error raised by ovisocr-loader."""

    def __init__(self, message: str, *, file: str | Path | None = None, page: int | None = None):
        self.file = str(file) if file is not None else None
        self.page = page
        prefix = ""
        if self.file is not None:
            prefix = f"{self.file}"
            if page is not None:
                prefix += f" page {page}"
            prefix += ": "
        elif page is not None:
            prefix = f"page {page}: "
        super().__init__(prefix + message)
        self.reason = message

    def __reduce__(self) -> tuple[object, ...]:
        """Pickled whole (a page error raised in a render worker process keeps its file,
        page and reason), without calling ``__init__`` again."""
        return (_restore, (type(self), self.args, self.__dict__))


def _restore(cls: type[OvisLoaderError], args: tuple[object, ...], state: dict[str, object]
             ) -> OvisLoaderError:
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class SourceError(OvisLoaderError):
    """The input cannot be turned into page images."""


class UnsupportedFormatError(SourceError):
    """Neither a PDF nor a supported image (PNG, JPEG, WebP, BMP, GIF, TIFF)."""


class CorruptFileError(SourceError):
    """The file, or one page of it, cannot be decoded."""


class PasswordRequiredError(SourceError):
    """An encrypted PDF was opened without its password, or with a wrong one."""


class EmptyDocumentError(SourceError):
    """The document has no pages."""


class ServerError(OvisLoaderError):
    """The OvisOCR2 endpoint did not give a usable answer."""

    def __init__(
        self,
        message: str,
        *,
        url: str | None = None,
        attempts: int = 1,
        file: str | Path | None = None,
        page: int | None = None,
    ):
        super().__init__(message, file=file, page=page)
        self.url = url
        self.attempts = attempts


class ServerUnreachableError(ServerError):
    """Nothing answers at the endpoint; raised once, before any page is sent."""


class ServerConnectionError(ServerError):
    """A connection failed or was reset while a page was in flight; retried."""


class ServerTimeoutError(ServerError):
    """A request exceeded one of the bounds in :class:`ovisocr_loader.Timeouts`."""


class FirstTokenTimeout(ServerTimeoutError):
    """No token arrived within ``first_token_timeout`` seconds."""


class PageTimeout(ServerTimeoutError):
    """The page did not finish within ``page_timeout`` seconds."""


class ServerStatusError(ServerError):
    """The server answered with an HTTP error status.

    ``status_code`` holds the status and the message repeats what the server said,
    e.g. vLLM's ``"The model `x` does not exist."``.
    """

    def __init__(self, message: str, *, status_code: int, retry_after: float | None = None,
                 url: str | None = None, attempts: int = 1, file: str | Path | None = None,
                 page: int | None = None) -> None:
        super().__init__(message, url=url, attempts=attempts, file=file, page=page)
        self.status_code = status_code
        self.retry_after = retry_after


class ServerProtocolError(ServerError):
    """The response was not valid JSON or SSE, or the stream broke off."""


class PageError(OvisLoaderError):
    """A page still failed after its retries and the parser runs with ``errors="raise"``.

    It is raised ``from`` the error of the page's last try (``__cause__``);
    ``status_code`` repeats that error's HTTP status, when it had one.

    Example::

        try:
            parser.parse("scan.pdf")
        except PageError as exc:
            print(exc.file, exc.page, exc.kind, exc.status_code)
    """

    def __init__(self, message: str, *, kind: str, file: str | Path | None = None,
                 page: int | None = None, status_code: int | None = None) -> None:
        super().__init__(message, file=file, page=page)
        self.kind = kind
        self.status_code = status_code
