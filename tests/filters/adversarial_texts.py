"""Hostile texts for the ``text`` step's worst-case cost (docs/captions.md, "Worst-case cost of
hostile input"): ``FAMILIES`` maps a family's name to ``make(n) -> str``, a text of exactly
``n`` characters (``n`` >= 1).

Targeted families are built against one pattern of ``filters/text_rules.py`` (or
``text_facts``, ``sentences``, ``file_names``): a run that each start position of an unanchored
search reads to its end and then fails (what makes a search quadratic), with the rule's gate
and internal gates satisfied so the pattern really runs.  Generic families repeat one token
(digits, mixed-case letters, punctuation, CJK, emoji, long words without spaces) or mix them
with a seeded generator.  Used by ``bench/text_worst.py`` and ``tests/filters/test_text_worst.py``.
"""
from __future__ import annotations

import random


def _fill(unit: str, n: int, head: str = "", tail: str = "") -> str:
    """``head`` + ``unit`` repeated + ``tail``, cut to ``n`` characters (the tail kept)."""
    body_len = max(n - len(head) - len(tail), 0)
    body = (unit * (body_len // max(len(unit), 1) + 1))[:body_len]
    return (head + body + tail)[:n] if len(head) + len(tail) <= n else (head + tail)[:n]


def _mix(seed: int, alphabet: list[str]):
    def make(n: int) -> str:
        rng = random.Random(seed * 100_003 + n)
        out, size = [], 0
        while size < n:
            tok = rng.choice(alphabet)
            out.append(tok)
            size += len(tok)
        return "".join(out)[:n]
    return make


_TOKENS = ["1", "12", "1.", "1,", "1 ", "a", "aA", "A", "a.", "a-", "a_", ".", "-", "#a ", "@",
           "x", "1x", "aB", "1aB", "/", "(", ")", "[", "]", "&", "<", ">", "'", "’", " ", "  ",
           "中", "日本", "😀", "👍🏽", "é", "\u200b", "\\", "{", ":", ";", "!", "?", "%", "$",
           "©", "By ", "Photo ", "www.", ".com", ".jpg", "IMG", "Mr. ", "\n", "\t"]

FAMILIES = {
    # --- generic: one token repeated -----------------------------------------------------
    "gen_digits": lambda n: _fill("1", n),
    "gen_digits_spaces_dots": lambda n: _fill("1 .", n),
    "gen_digit_dot": lambda n: _fill("1.", n),
    "gen_digit_comma": lambda n: _fill("1,", n),
    "gen_letters_lower": lambda n: _fill("a", n),
    "gen_letters_mixed": lambda n: _fill("aA", n),
    "gen_letters_upper": lambda n: _fill("A", n),
    "gen_word_spaces": lambda n: _fill("aA ", n),
    "gen_upper_words": lambda n: _fill("AB ", n),
    "gen_same_word": lambda n: _fill("the ", n),
    "gen_punct": lambda n: _fill(".", n),
    "gen_punct_mixed": lambda n: _fill("!?.,;:-", n),
    "gen_symbols_spaced": lambda n: _fill("- ", n),
    "gen_cjk": lambda n: _fill("中文字", n),
    "gen_emoji": lambda n: _fill("😀", n),
    "gen_emoji_letters": lambda n: _fill("a😀", n),
    "gen_long_word_hex": lambda n: _fill("a1", n),
    "gen_alnum_camel": lambda n: _fill("1aB", n),
    "gen_dotted_letters": lambda n: _fill("a.", n),
    "gen_hyphen_letters": lambda n: _fill("a-", n),
    "gen_underscore_letters": lambda n: _fill("a_", n),
    "gen_brackets": lambda n: _fill("([", n),
    "gen_mix_1": _mix(1, _TOKENS),
    "gen_mix_2": _mix(2, _TOKENS),
    "gen_mix_3": _mix(3, _TOKENS),
    "gen_mix_4": _mix(4, _TOKENS),
    "gen_mix_5": _mix(5, _TOKENS),
    # --- targeted: markup --------------------------------------------------------------------
    "markup_open_tags": lambda n: _fill("<a", n, "a "),            # _TAG_RE: "<" never closed
    "markup_shortcode": lambda n: _fill(" a=b", n, "[a", "x"),      # _TAG_RE: "[w a=b ..." no "]"
    "markup_shortcode_eq": lambda n: _fill(" a=", n, "[a"),
    "markup_latex": lambda n: _fill("\\a", n, "x "),               # _LATEX_RE
    "markup_entities": lambda n: _fill("&amp;", n, "a "),
    "markup_mojibake": lambda n: _fill("Ã©a", n),
    # --- email / url ----------------------------------------------------------------------
    "email_no_host": lambda n: _fill("a", n, "", "@"),             # [\w.+-]+@ from every start
    "email_dots": lambda n: _fill("a.", n, "", "@"),
    "email_at_words": lambda n: _fill("a.", n, "", " (at) x"),     # \b[\w.+-]+\s*[\[(]at
    "email_at_host": lambda n: _fill("a-", n, "x@b.", ""),
    "url_dotted_no_tld": lambda n: _fill("a.", n, "x.com "),       # [\w-]*(?:\.[\w-]+)*\.TLD
    "url_dashed_no_tld": lambda n: _fill("a-", n, "x.com "),
    "url_scheme_run": lambda n: _fill("a", n, "http://"),
    "url_www_punct": lambda n: _fill(".", n, "www.a"),
    # --- filename ---------------------------------------------------------------------------
    "file_no_ext": lambda n: _fill("a", n, "", ".jp"),             # [\w\-.%~+]*\w\.ext
    "file_dots_no_ext": lambda n: _fill("a.", n, "", "x.jpx"),
    "file_ext_hint": lambda n: _fill("a%", n, "b.jpg ", ""),
    "file_camera_run": lambda n: _fill("_1", n, "IMG_123"),        # (?:[_-]\d+)*(?:_\w+)?\b
    "file_camera_dash": lambda n: _fill("-1", n, "DSC_123", "-"),
    "file_hash_hex": lambda n: _fill("a1", n, "", "g"),            # (?=[0-9a-f]*\d)... {12,}\b
    "file_hash_spaced": lambda n: _fill("a1b2c3d4e5f6 ", n, "x.jpg "),
    "file_id_camel": lambda n: _fill("aB", n, "1", "_"),           # _ID_RE: lazy *? then [a-z][A-Z]
    "file_id_camel_dash": lambda n: _fill("aB-", n, "1", "_"),
    "file_id_digits": lambda n: _fill("1aB1", n, "1", "+-"),
    "file_slug": lambda n: _fill("a_", n, "", "."),                # _SLUG_RE: ^\w+(?:_\w+)+$
    "file_slug_dash": lambda n: _fill("a-", n, "", "!"),
    "file_whole": lambda n: _fill("a ", n, "x.jpg ", ".jpgx"),
    # --- dimension --------------------------------------------------------------------------
    "dim_digits_x": lambda n: _fill("11x", n),
    "dim_digits_px": lambda n: _fill("11 ", n, "x "),
    # --- credit -------------------------------------------------------------------------------
    "credit_paren_open": lambda n: _fill("(a/", n, "", ")"),       # _PAREN_CREDIT_RE lookaheads
    "credit_paren_nested": lambda n: _fill("(photo ", n, "", ")"),
    "credit_paren_slash": lambda n: _fill("a/", n, "(", ")"),
    "credit_label": lambda n: _fill("photo credit ", n, "", ":"),
    "credit_copyright": lambda n: _fill("© 2020 ", n),
    "credit_photo_by": lambda n: _fill("photo by ", n),
    "credit_media_by": lambda n: _fill(". Animation by A", n, "x"),
    "credit_agency": lambda n: _fill(" / getty", n, "a"),
    "credit_bare": lambda n: _fill("A/", n, "Photo: "),
    "credit_slashes": lambda n: _fill("Aa / ", n),
    "credit_brackets": lambda n: _fill("[photo ", n, "", "]"),
    # forty-sixth pass (A): whole-text credits of new shapes
    "credit_bracket_studio": lambda n: _fill("photography", n, "(a ", "x"),   # _BRACKET_CREDIT_RE
    "credit_bracket_studio_spaced": lambda n: _fill("a", n, "(Jane photography ", "x"),
    "credit_courtesy_names": lambda n: _fill("Aa/", n, "Courtesy of "),
    "credit_courtesy_bare": lambda n: _fill("A", n, "Courtesy ", " x"),
    "credit_via": lambda n: _fill("Aa/", n, "", " via AP"),
    "credit_licence": lambda n: _fill("a ", n, "Photo used under ", "cc"),
    "credit_words_only": lambda n: _fill(".", n, "Photo credit"),
    # forty-ninth pass (C): a credit glued before a caption (_LEAD_CREDIT_RE, anchored, its
    # name words and agency bounded) and an agency after a copyright sign (_COPYRIGHT_AGENCY_RE)
    "credit_lead_glued": lambda n: _fill("Aa Bb/Getty ImagesAa ", n),
    "credit_lead_names": lambda n: _fill("A ", n, "", "/AP Aa bb"),
    "credit_lead_slashes": lambda n: _fill("Aa/", n, "Aa Bb/USA TODAY Sports "),
    "credit_lead_agencies": lambda n: _fill("Getty Images ", n, "Jo Doe/"),
    "credit_copyright_agency": lambda n: _fill("Getty Images ", n, "© "),
    # --- boilerplate / promo / price -----------------------------------------------------
    "boiler_pub_name": lambda n: _fill("Aa ", n, "", "Blo"),       # (?:[A-Z][\w.-]*/? ){1,5}
    "boiler_feed": lambda n: _fill("posted ", n, "the "),
    "boiler_section": lambda n: _fill("Aa, ", n, "Aa: "),
    "boiler_rating": lambda n: _fill("1", n, "", " sta"),          # \d+(?:[.,]\d+)?\s*...stars
    "boiler_rating_dots": lambda n: _fill("1.", n, "", "star"),
    "promo_percent": lambda n: _fill("1 %", n, "save "),
    "promo_phone": lambda n: _fill("1 (", n, "call ", "x"),        # \d[\d\s().-]*\d
    "promo_phone_dash": lambda n: _fill("1-", n, "phone a b ", "-"),
    "price_digits": lambda n: _fill("1.,", n, "$"),                # [\d.,]* + _BIG lookahead
    "price_dotted": lambda n: _fill("1.", n, "", " €x"),
    "price_words": lambda n: _fill("1,", n, "", " dollarz"),
    "price_words_gated": lambda n: _fill("1,", n, "dollars ", " dollarz"),  # the gate passed
    # forty-first pass: the trailing price run (a failed match backtracks once per split)
    "price_tail_spaced": lambda n: _fill("$1 ", n, "a ", "x"),   # gap: one space
    "price_tail_ranges": lambda n: _fill("$1 - ", n, "a ", "x"),  # a dash is a range only
    "price_tail_labels": lambda n: _fill("Price : $1 , ", n, "a ", "x"),
    "price_tail_after": lambda n: _fill("1 € ", n, "a ", "x"),
    # forty-sixth pass (B), the last rule since the forty-ninth (B'): the teaser tail (each
    # search is tried at each of the last 120 positions; pieces are bounded, the loop stops
    # after six)
    "tail_durations": lambda n: _fill("1 min ", n, "a ", "1 mins"),
    "tail_dates": lambda n: _fill("a May 1, 2020 ", n, "a ", "x 2020"),
    "tail_counts": lambda n: _fill("1 Comments • ", n, "a ", "1 Comments"),
    "tail_glued": lambda n: _fill("aMay 1, 2020", n, "a "),
    "tail_digits": lambda n: _fill("1 ", n, "a ", "1"),
    # --- punctuation / caps / lists / repeats ---------------------------------------------
    "punct_runs": lambda n: _fill("!!a", n),
    "punct_same": lambda n: _fill("*", n, "a"),
    "punct_dots_letters": lambda n: _fill("...a", n),
    "caps_words": lambda n: _fill("AB CD ", n),
    "hashtags_trailing": lambda n: _fill(" #a", n, "text", " ."),  # (?:\s+#\w+)+\s*$
    "hashtags_spaced": lambda n: _fill("  #a", n, "a", "."),
    "list_separators": lambda n: _fill("a, ", n),
    "list_spaced_dash": lambda n: _fill("a - ", n),
    "repeat_double": lambda n: _fill("ab ", n),                    # \b(\w+)(?:\s+\1\b)+
    "repeat_prefix": lambda n: _fill("a aa ", n),
    "repeat_long_word": lambda n: _fill("a", n // 2, "", " ") + _fill("a", n - n // 2),
    # --- lead / exclamation / dateline / lead_in ------------------------------------------
    "lead_sentences": lambda n: _fill("A. ", n),                   # _SENTENCE_END_RE
    "lead_abbrev": lambda n: _fill("Mr. ", n),
    "lead_quotes": lambda n: _fill(".\"')]", n, "A", " A"),
    "dateline_digits": lambda n: _fill("1/1/", n),
    "dateline_month": lambda n: _fill("Jan 1, ", n),
    "dateline_published": lambda n: _fill("Published: ", n),
    "byline_end": lambda n: _fill("a By Aa Bb ", n, "", " 1 min"),  # \S\s+By NAME ... \s*$
    "byline_pipe": lambda n: _fill(" By Aa Bb |", n, "x"),
    "lead_in_colon": lambda n: _fill("a ", n, "", ":"),
    "lead_in_ellipsis": lambda n: _fill("a ", n, "", "..."),
    # --- lang / oov -----------------------------------------------------------------------
    "oov_unique_words": _mix(7, ["qz", "xv", "bk", "zz", "jq", " "]),
    "oov_name": lambda n: _fill("Aa", n, "", " Bb"),               # _NAME_RE
    "oov_titles": lambda n: _fill("Zxqv ", n),
    "lang_mixed_scripts": _mix(8, ["a", "中", "я", "ع", "ש", "α", " "]),
    # --- sentences ------------------------------------------------------------------------
    "sentences_lines": lambda n: _fill(" \n ", n, "a"),
    "sentences_ends": lambda n: _fill(". ", n, "a"),
    # --- surrounding texts only (TextCleaner._spoken) ---------------------------------------
    "speaker_long_token": lambda n: _fill("x", n, "", " I am"),    # the word before "I"
    "speaker_spaces": lambda n: _fill(" ", n, "x", "I am"),
    "speaker_many": lambda n: _fill("Ab I ", n),                   # a regnal "I" at every word
    "speaker_quoted": lambda n: _fill("a ", n, "“", " we"),        # testimonial()
    "title_aside_brackets": lambda n: _fill("(a b ", n, "A b ", ")!"),  # _title_aside
    "bilingual_halves": lambda n: _fill("я ", n, "", " - a b"),   # bilingual_half
}
