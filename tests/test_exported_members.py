"""The public surface: __all__ and the module's names must agree."""

import ovisocr_loader
import ovisocr_loader.testing


def test_all_names_exist_and_every_public_name_is_listed():
    for module in (ovisocr_loader, ovisocr_loader.testing):
        public = {n for n in vars(module) if not n.startswith("_")} - {
            n for n, v in vars(module).items() if type(v).__name__ == "module"}
        assert set(module.__all__) == public | (set(module.__all__) & {"__version__"})
        for name in module.__all__:
            assert hasattr(module, name)


def test_headline_names():
    assert ovisocr_loader.OvisParser.__name__ == "OvisParser"
    assert issubclass(ovisocr_loader.PageError, ovisocr_loader.OvisLoaderError)
    assert issubclass(ovisocr_loader.FirstTokenTimeout, ovisocr_loader.ServerError)
