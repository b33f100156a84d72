"""Internal: the machinery behind :class:`~ovisocr_loader.OvisParser`.

``session`` (one per event loop: endpoints, limits, cache), ``scheduler`` (which
page runs when), ``page_step`` (one page start to finish) and ``cache``. Nothing
here is public API: entry points (the CLI, the framework adapters, Ray) use
``OvisParser``, which offers all a long-lived worker needs.
"""
