"""The tokenizer-free budget estimate: close to an embedding model's word pieces on
what OCR pages hold (prose, numbers, CJK, other alphabets, formulas)."""

from __future__ import annotations

from ovisocr_loader.elements.token_estimate import approx_tokens


def test_english_words_numbers_and_marks():
    assert approx_tokens("") == 0
    assert approx_tokens("The adjustments related") == 1 + 2 + 1   # seven letters a piece
    assert approx_tokens("Wireless 2019: 1,320") == 2 + 2 + 1 + 1 + 1 + 1
    assert approx_tokens("x_0 + x_1") == 7


def test_cjk_characters_count_one_each():
    assert approx_tokens("营业收入") == 4
    assert approx_tokens("同比增长 12.4%") == 4 + 1 + 1 + 1 + 1
    assert approx_tokens("（元）") == 3                    # full-width marks too


def test_other_alphabets_count_a_piece_per_two_letters():
    assert approx_tokens("شبکه") == 2
    assert approx_tokens("Anpassungen") == 2                # Latin script, accents or not
    assert approx_tokens("hauptsächlich") == 2
    assert approx_tokens("Организация") == 6             # Cyrillic: a piece per two letters


def test_a_page_of_numbers_counts_more_than_four_characters_a_token():
    row = "Net revenue August 31,2019: $6,573,453; May 31,2019: $6,135,602"
    assert approx_tokens(row) > len(row) / 4
