"""Thin adapters from the shared document model to RAG frameworks.

The framework modules import their framework; ``common`` does not, so it can be
tested and reused without either installed. Import the adapters from their
public paths, :mod:`ovisocr_loader.llama_index` and :mod:`ovisocr_loader.langchain`.
"""
