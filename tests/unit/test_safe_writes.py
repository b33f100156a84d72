"""The pure parts of safe writing: whole-or-nothing files, names, comments, redaction."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ovisocr_loader.cli.outputs import output_names
from ovisocr_loader.client.secrets import Secrets
from ovisocr_loader.errors import ServerStatusError
from ovisocr_loader.writes import comment_safe, shown_name, write_atomically


def test_a_failed_write_leaves_the_previous_file_and_no_temporary_one(tmp_path: Path):
    target = tmp_path / "out.md"
    target.write_text("before")
    with pytest.raises(TypeError):
        write_atomically(target, 42)  # type: ignore[arg-type]
    assert target.read_text() == "before" and os.listdir(tmp_path) == ["out.md"]
    write_atomically(target, "after")
    assert target.read_text() == "after" and os.listdir(tmp_path) == ["out.md"]


def test_an_os_error_names_the_file_meant(tmp_path: Path):
    (tmp_path / "file").write_text("")
    with pytest.raises(OSError) as caught:
        write_atomically(tmp_path / "file" / "x.md", "text")
    assert caught.value.filename == str(tmp_path / "file" / "x.md")


def test_shown_names_and_comments():
    assert shown_name(os.fsdecode(b"bad\xffbyte.pdf")) == "bad\\xffbyte.pdf"
    assert shown_name("line\nbreak.pdf") == "line\\x0abreak.pdf"
    assert shown_name("Café ☕.pdf") == "Café ☕.pdf"
    assert comment_safe("a-->b<!--c--!>d") == "a--&gt;b&lt;!--c--!&gt;d"


def test_inputs_that_would_share_an_output_get_their_own_names(tmp_path: Path):
    inputs = [tmp_path / "a.pdf", tmp_path / "a.png", tmp_path / "A.PDF",
              tmp_path / "sub" / "a.pdf", tmp_path / "a.PDF"]
    names = {Path(k).relative_to(tmp_path).as_posix(): v.as_posix()
             for k, v in output_names(inputs).items()}
    assert names == {"a.pdf": "a", "a.png": "a.png", "A.PDF": "A.PDF", "sub/a.pdf": "sub/a",
                     "a.PDF": "a.PDF-2"}   # names that differ only in case clash on macOS


def test_secrets_are_redacted_in_every_form_a_server_echoes_them():
    secrets = Secrets("sk-abc/123+xyz", None)
    text = ("Incorrect API key provided: sk-abc/123+xyz; quoted sk-abc%2F123%2Bxyz; "
            "header 'Authorization: Bearer someone-elses'")
    assert secrets.redact(text) == ("Incorrect API key provided: [redacted]; quoted "
                                    "[redacted]; header 'Authorization: Bearer [redacted]'")
    assert Secrets("EMPTY").redact("EMPTY") == "EMPTY"     # the placeholder is no secret
    error = ServerStatusError("HTTP 401: bad key sk-abc/123+xyz", status_code=401,
                              file="x.pdf", page=2)
    assert "sk-abc" not in str(secrets.scrub(error)) and "sk-abc" not in error.reason
    assert str(error) == "x.pdf page 2: HTTP 401: bad key [redacted]"
