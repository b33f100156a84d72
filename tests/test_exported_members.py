"""The public surface: __all__ and the module's names must agree."""

import subprocess
import sys

import ovisocr_loader
import ovisocr_loader.eval
import ovisocr_loader.langchain
import ovisocr_loader.llama_index
import ovisocr_loader.testing


def test_all_names_exist_and_every_public_name_is_listed():
    for module in (ovisocr_loader, ovisocr_loader.testing, ovisocr_loader.llama_index,
                   ovisocr_loader.langchain, ovisocr_loader.eval):
        public = {n for n in vars(module) if not n.startswith("_")} - {
            n for n, v in vars(module).items() if type(v).__name__ == "module"}
        assert set(module.__all__) == public | (set(module.__all__) & {"__version__"})
        for name in module.__all__:
            assert hasattr(module, name)


def test_headline_names():
    assert ovisocr_loader.OvisParser.__name__ == "OvisParser"
    assert issubclass(ovisocr_loader.PageError, ovisocr_loader.OvisLoaderError)
    assert issubclass(ovisocr_loader.FirstTokenTimeout, ovisocr_loader.ServerError)


def test_the_core_never_imports_a_framework():
    code = ("import sys, ovisocr_loader, ovisocr_loader.cli; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('llama_index', 'langchain_core', 'langchain')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "[]"
