"""What each drop reason means, in a sentence, for the report and the ``stats`` table.

A reason's name (``extract_image_furniture``, ``text_dateline``) says which step dropped a
record and a word for why; a user deciding whether a filter is too strict needs the rule
behind the word.  Reasons are ``<step>_<what>`` (``pipeline/core/stage.py``), many built at
run time (an image's role, a text rule, an HTTP status, an exception's type), so the
explanations are a table of fixed reasons plus patterns for the built ones.
``tests/tools/test_report_reasons.py`` checks that every reason the code can emit is explained.
"""
from __future__ import annotations

import re
from collections import Counter

from filters.text_rules import RULES

# Image roles (pipeline/steps/image_roles.py): images that are page furniture, not pictures.
ROLES = {
    "ad": "an advertisement (an ad network's host, an ad slot's size or class)",
    "avatar": "a person's profile picture beside a name (author, commenter)",
    "badge": "a badge or seal (ratings, awards, certifications)",
    "branded": "a picture whose only texts name the site or a brand, not what it shows",
    "furniture": "part of the page's furniture (menu, header, footer, sidebar, related-links box), "
                 "not its content",
    "icon": "an icon (declared at most 48 px, or named an icon by its class, file or alt)",
    "logo": "a logo (named so by its file, class, alt or the link around it)",
    "small": "a thumbnail: declared at most 100 px both ways, with no larger version named on the page "
             "nor one its URL gives (a resizing CDN's size, a WordPress upload's original)",
    "spacer": "a spacer or a 1-2 px image used for layout",
    "tracker": "a tracking pixel (an analytics or ad host, or 1x1)",
    "vector": "a vector graphic (SVG), which the image steps do not decode",
}

TEXT = {
    "markup": "the text was HTML or template markup, not words",
    "bad_chars": "the text was mostly control, replacement or private-use characters",
    "email": "an e-mail address was all the text held",
    "url": "a URL was all the text held",
    "filename": "the text was a file name (or a CMS title made from one), not a description",
    "dimension": "a size like '1200x800' was all the text held",
    "credit": "a photo credit or copyright line was all the text held",
    "boilerplate": "a site's stock phrase ('click to enlarge', 'image may contain', 'share this')",
    "promo": "a promotion or call to action ('subscribe', 'buy now', 'sponsored')",
    "price": "a price or a shopping line: a price alone, a list of prices, a price inside a "
             "sentence or headline, or one leading a deal (a product's name before its price is "
             "kept, the price cut: edit 'price')",
    "tail": "a teaser's metadata was all the text held (never given: the last rule, 'tail', "
            "cuts a cooking time, a count of comments, an age or a date ending a text the "
            "other rules kept, only where two words are left)",
    "adult": "words from the adult-content list",
    "spam": "spam words (pharmacy, gambling, loans, crypto giveaways, replica goods)",
    "punctuation": "more punctuation or symbols than words",
    "all_caps": "written in capitals (a heading, a label or a shout), not a caption",
    "hashtags": "hashtags were all the text held",
    "keyword_list": "a list of keywords or tags separated by commas or bars, not a sentence",
    "repeated_words": "the same words repeated (stuffing or a broken template)",
    "lead": "nothing was left once the leading whole sentences were kept",
    "exclamation": "an exclamation or a teaser ('You won't believe ...!')",
    "first_person": "a sentence beside the picture in the first person singular: the writer's "
                    "chatter or a comment ('I know I say this about every bake ...')",
    "dateline": "a byline, date or dateline ('By Jane Doe', 'Updated 3 May 2022')",
    "lead_in": "a lead-in that ends before its point ('Read more ...', 'Continue reading')",
    "truncated": "cut off mid-sentence by the page ('...')",
    "too_short": "shorter than text.min_words / text.min_chars (a picture's own alt, title or "
                 "caption may be as short as text.min_words_own)",
    "too_long": "longer than text.max_words, with no leading whole sentences short enough to keep",
    "not_target": "in a language the run does not target (language.targets)",
    "oov": "too many words outside the vocabulary (the out-of-vocabulary ratio of the paper)",
    "empty": "nothing was left after cleaning",
}

FETCH = {
    "bad_redirect": "a redirect without a usable Location",
    "bad_url": "the URL could not be parsed or has a scheme the fetcher does not speak",
    "blocked_address": "the address is private, loopback or otherwise not allowed (fetch.allow_networks)",
    "connection_error": "the connection failed or was reset (after the retries)",
    "dns_error": "the host name did not resolve",
    "empty": "the server answered with no body",
    "not_an_image": "the body is not an image the decoder can read (another format, or an image "
                    "file cut short before its size)",
    "opt_out": "the image's X-Robots-Tag header opts out (fetch.opt_out tokens, e.g. noai)",
    "robots_disallowed": "robots.txt disallows the URL for this crawler",
    "robots_unreachable": "robots.txt answered 5xx or timed out, so the host is treated as disallowed (RFC 9309)",
    "svg": "an SVG, which the image steps do not decode",
    "timeout": "the request took longer than the timeout (after the retries)",
    "too_large": "the body is larger than the size limit",
    "too_many_redirects": "more redirects than allowed, or a redirect back to a URL already visited",
    "truncated": "the body ended before its declared length",
}

EXACT = {
    "read_bad_record": "a WARC record that could not be parsed (damaged bytes); reading goes on "
                       "at the next record",
    "read_http_status": "a WARC response whose HTTP status is not 200 or 203 (a redirect, 404, 5xx, "
                        "206 partial content)",
    "read_not_html": "a WARC response that is not an HTML page",
    "read_no_url": "a WARC response with no absolute http(s) WARC-Target-URI (missing, empty, "
                   "relative): the page cannot say where it came from",
    "read_page_too_large": "a page larger than the page size limit",
    "read_truncated": "a WARC file that ends mid-record (a cut download)",
    "read_warc_truncated": "a WARC response whose payload the crawler cut (WARC-Truncated: length, "
                           "time, disconnect): the page is incomplete",
    "read_unreadable": "an input file that could not be opened or decompressed",
    "read_code": "the object store answered with an error code for this input file",
    "read_forbidden": "the object store refused access to this input file",
    "read_io_error": "an I/O error while reading this input file",
    "read_not_found": "the input file does not exist (any more)",
    "read_status": "the object store answered with an unexpected HTTP status",
    "crawl_duplicate": "a URL already crawled (after normalising)",
    "crawl_html_too_deep": "a page nested deeper than the HTML parser allows",
    "crawl_opt_out_header": "the page's X-Robots-Tag header opts out (noai / noimageai)",
    "crawl_opt_out_meta": "the page's robots meta tag opts out (noai / noimageai)",
    "crawl_page_limit": "past the crawl's page limit",
    "crawl_unparsable": "the page could not be parsed as HTML",
    "language_html_too_deep": "a page nested deeper than the HTML parser allows",
    "language_not_target": "the page is in a language the run does not target (language.targets)",
    "language_uncertain": "the page's language could not be told with enough confidence",
    "language_unknown": "the page has too little text to tell its language",
    "extract_html_too_deep": "a page nested deeper than the HTML parser allows",
    "extract_undecodable": "the page's bytes could not be decoded in any charset tried",
    "extract_no_images": "the page holds no image",
    "extract_no_text": "the page's images have no text (alt, title, caption or surrounding)",
    "extract_image_no_url": "an image element with no usable URL (data: URIs, empty src, one over "
                            "8,192 characters)",
    "extract_image_no_text": "an image with no usable text of its own or around it",
    "extract_image_over_page_cap": "an image past the first extract.max_images_per_page images "
                                   "of its page (in document order), never judged nor fetched",
    "extract_side_region": "surrounding text in the page's furniture (menu, footer, sidebar)",
    "extract_side_links": "surrounding text that is a list of links",
    "extract_side_repeat": "surrounding text that repeats the image's alt, caption or title",
    "image_decode_bomb": "an image the decoder refused as a decompression bomb",
    "image_decode_failed": "image bytes the decoder could not read",
    "image_size_too_small": "an image narrower or lower than image.min_width / min_height (300 px both ways, as in the paper)",
    "image_size_too_many_pixels": "an image claiming more pixels than image.max_pixels (a decompression bomb)",
    "image_store_no_pixels": "an image whose pixels were gone before its JPEG could be stored",
    "naturalness_not_natural": "not a natural photograph (drawing, chart, screenshot, render), "
                               "by the naturalness model",
    "naturalness_flat_graphic": "a flat graphic (few colours, large uniform areas), caught before the model",
    "nsfw_unsafe": "pornographic, by the NSFW model",
    "hash_blocklist_image": "an image on the hash blocklist (withheld from the report)",
    "dedup_evaluation_image": "a near-copy of an evaluation image (withheld from the report)",
    "dedup_near_duplicate": "a near-duplicate of another image: its texts go on with the kept copy",
    "score_irrelevant": "the (image, text) pair scored under the relevance threshold (score.threshold)",
    "score_empty_text": "a pair whose text is empty after cleaning",
    "score_no_score": "the scorer gave no finite score for this pair",
    "best_text_not_best": "not the best-scoring text of its image (LAIT keeps one text per image)",
    "aggregate_not_best": "not the best-scoring text of its image (LAIT keeps one text per image)",
    "text_share_too_many_images": "a text shared by more distinct images than text_share.max_images_per_text "
                                  "(LAIT drops texts many images share)",
}

_STEP_OF_ERROR = re.compile(r"^(\w+?)_error_(\w+)$")
_HTTP = re.compile(r"^(?:crawl|fetch)_http_(\d{3})$")
_BLOCKLIST = re.compile(r"^(?:(?:fetch|crawl)_)?(url|redirect|page)_blocklist_(domain|prefix|regex|hash)$")
_DEDUP_BAND = re.compile(r"^dedup_band_\d+_near_duplicate$")
_NOT_TYPE = re.compile(r"^(?:crawl|fetch)_not_(\w+)$")


def explain(reason: str) -> str | None:
    """One sentence saying why records with ``reason`` were dropped, or None if unknown."""
    if reason in EXACT:
        return EXACT[reason]
    if _DEDUP_BAND.match(reason):  # filters/dedup.py: one stage per band before the last
        return EXACT["dedup_near_duplicate"]
    m = _STEP_OF_ERROR.match(reason)
    if m:
        return (f"an unexpected {m.group(2)} error in the {m.group(1)} step on this record "
                "(counted, not fatal; the log has the message)")
    m = _HTTP.match(reason)
    if m:
        return f"the server answered HTTP {m.group(1)}" + (" (after the retries)" if m.group(1)[0] == "5"
                                                            or m.group(1) == "429" else "")
    m = _BLOCKLIST.match(reason)
    if m:
        what = {"redirect": "a redirect's target", "page": "the page's URL"}.get(m.group(1), "the URL")
        return f"{what} matched a {m.group(2)} entry of the blocklist (withheld from the report)"
    for prefix in ("fetch_", "crawl_"):
        if reason.startswith(prefix) and reason[len(prefix):] in FETCH:
            return FETCH[reason[len(prefix):]]
    m = _NOT_TYPE.match(reason)
    if m:  # the fetcher's type_name (pipeline/web/response.py), said in words
        what = {"image_type": "an image (an HTML error or login page, ...)", "html": "HTML"}
        return f"the server answered with a content type that is not {what.get(m.group(1), m.group(1))}"
    if reason.startswith("extract_image_") and reason[14:] in ROLES:
        return "an image set aside as " + ROLES[reason[14:]]
    if reason.startswith("text_") and reason[5:] in TEXT:
        return "a text dropped: " + TEXT[reason[5:]]
    if reason.endswith("_undecodable"):
        return "image bytes this step could not decode"
    return None


def describe(reason: str) -> str:
    """:func:`explain`, or a pointer to the docs for a reason with no sentence."""
    return explain(reason) or "(no description: see docs/)"


def reason_counts(steps: list[dict]) -> Counter:
    """Each reason's drops over the steps of stats.json and the units inside them, in the
    order first met (the funnel's)."""
    counts: Counter = Counter()
    for s in steps:
        for d in (s["dropped"], *(u["dropped"] for u in s.get("units", {}).values())):
            counts.update(d)
    return counts


def text_reasons() -> set[str]:
    """Every ``text_*`` reason the text rules can give (their own names and listed suffixes)."""
    return {r for rule in RULES for r in rule.drop_reasons} | {"text_empty", "text_filename",
                                                               "text_too_short"}
