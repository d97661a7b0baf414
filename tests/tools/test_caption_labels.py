"""Caption quality on the labelled English real pages (tests/data/real_pages_en_labels.jsonl)
and the mostly German ones (tests/data/real_pages_labels.jsonl, de-dev and de-check):
extraction + the text step against labels written by eye (tools/caption_labels.py).

Prints, per split and source, the share of junk kept, of good captions lost (dropped or not
extracted) and the precision of what is kept, and holds the dev split to its bounds."""
import json
import os
from collections import Counter

import pytest

from tools.caption_labels import (LABELS, LABELS_DE, PAGES_DE, PAGES_EN, TARGETS_DE, all_items,
                                  de_split_of, format_table, measure, pair_below, read_labels,
                                  served_size, site_of, thumbnails)

# Issue 14's targets: junk kept <= 0.08 and good captions lost (dropped or not extracted) <=
# 0.05.  On the dev split (eighth pass: random samples 1, 2, 4, 7 and 8) junk kept is 0.031 and
# good lost 0.064: the good-lost target is NOT met (10 of the 26 lost are pictures declared,
# named or asked of their server at 100 px or less with no larger version on the page, which
# the image step, 300 px both ways, could never keep; without those pictures' good items good
# lost is 0.039; the tenth pass asks a resizing CDN for 3 of them at 300 px: 0.057, 23 of
# 405), so the test bounded what held, with a small margin.  Fourteenth pass: three general
# faults fixed (a Tableau viz's static picture read as a feed icon, a name with a comma or a
# particle judged by its vocabulary, a layout wrapper's sidebar modifier read as the sidebar):
# 0.049, 20 of 405, junk kept 0.030; the target is met, by one item (docs/captions.md).  The English check split is printed, not bounded: it misses both targets
# (docs/captions.md, "Figures", "Third pass" to "Eighth pass").  The mostly German real_pages
# are split by site into de-dev and de-check and bounded below (seventh pass).
MAX_JUNK_KEPT = 0.035
MAX_GOOD_LOST = 0.055  # 0.047 in the sixteenth pass, 0.049 in the fourteenth (0.064 before)
MAX_GOOD_LOST_REACHABLE = 0.037  # 0.029 in the sixteenth, 0.031 in the fourteenth
# Pair level (ninth pass): a text kept for an image served under 300 px both ways counts as not
# kept (the image step drops the picture).  On dev 0.028 / 0.225 with the ninth pass's rescue
# of thumbnails that name a larger version (0.028 / 0.289 without it).
# Tenth pass: thumbnails a resizing CDN serves small are asked for at 300 px (0.029 / 0.203).
MAX_JUNK_KEPT_PAIR = 0.035
MAX_GOOD_LOST_PAIR = 0.21  # 0.198 in the fourteenth pass


@pytest.fixture(scope="module")
def labels():
    return read_labels()


@pytest.mark.parametrize("path", [LABELS, LABELS_DE])
def test_the_labels_are_well_formed(path):
    labels = read_labels(path)
    keys = set()
    for lab in labels:
        assert set(lab) >= {"page", "image_url", "source", "text", "label", "split"}
        assert lab["label"] in ("good", "junk", "vague") and lab["split"] in ("dev", "check")
        assert lab["source"] in ("alt", "caption", "title", "surrounding") and lab["text"]
        key = (lab["page"], lab["image_url"], lab["source"], lab["text"])
        assert key not in keys, key
        keys.add(key)
        assert lab.get("sample", 2) in range(2, 33)
        # samples 5, 10, 12 are stratified by region (header / footer / menu images), sample 11
        # and 13 by a stratum of their own ("larger": thumbnails naming a larger version;
        # "resize": thumbnails a resizing CDN serves small), samples 14 to 32 are random draws
        # capped at 3 items a site ("capped": no plain random draw, so reported on its own): they say so
        # and name each item's stratum, so that measure() keeps them out of the split's figures
        assert (lab.get("sample") in (5, 10, 12)) == (lab.get("stratified") == "region"), lab
        assert (lab.get("sample") in (11, 13, *range(14, 33))) == (lab.get("stratified") == "stratum"), lab
        if lab.get("stratified") == "region":
            assert lab["region"] in ("nav", "header", "footer") and lab["split"] == "dev"
        if lab.get("stratified") == "stratum":
            assert lab["stratum"] == {11: "larger", 13: "resize", 14: "capped",
                                      15: "capped", 16: "capped", 17: "capped",
                                      18: "capped", 19: "capped", 20: "capped",
                                      21: "capped", 22: "capped", 23: "capped",
                                      24: "capped", 25: "capped", 26: "capped",
                                      27: "capped", 28: "capped", 29: "capped",
                                      30: "capped", 31: "capped",
                                      32: "capped"}[lab["sample"]] \
                and lab["split"] == "dev"
    counts = Counter(lab["label"] for lab in labels)
    assert len(labels) >= 200 and min(counts.values()) >= 35, counts
    # one split per page (each page of the set is a different site)
    split = {}
    for lab in labels:
        assert split.setdefault(lab["page"], lab["split"]) == lab["split"]


@pytest.fixture(scope="module")
def english(labels):
    if not os.path.isdir(PAGES_EN):
        pytest.skip("../shared/data/real_pages_en absent")
    pages = sorted({lab["page"] for lab in labels})
    return measure(labels, all_items(pages), thumbnails(pages))


def test_junk_kept_and_good_lost_on_the_labelled_english_pages(english):
    result = english
    print("\n" + format_table(result))
    print(json.dumps(result["dev"]["all"]))
    dev = result["dev"]["all"]
    assert dev["n_good"] >= 400 and dev["n_junk"] >= 1050
    assert dev["junk_kept"] <= MAX_JUNK_KEPT
    assert dev["good_lost"] <= MAX_GOOD_LOST
    # reported beside the headline, never instead of it: good lost without the good items of
    # pictures served at 100 px or less (they cannot reach the image step's 300 px)
    assert 0 < dev["n_good_thumb"] < dev["n_good"]
    assert dev["good_lost_reachable"] <= MAX_GOOD_LOST_REACHABLE
    assert dev["junk_kept_pair"] <= MAX_JUNK_KEPT_PAIR
    assert dev["good_lost_pair"] <= MAX_GOOD_LOST_PAIR
    # What is kept is mostly good: more good than junk and vague together.
    assert dev["precision"] > 0.5


def test_the_issues_good_lost_target_on_dev(english):
    # met since the fourteenth pass (0.049, 20 of 405; 0.057 before; 0.047, 19 of 405, since
    # the sixteenth: docs/captions.md)
    assert english["dev"]["all"]["good_lost"] <= 0.05


def test_the_stratified_menu_and_thumbnail_samples(english):
    # Sample 10 (ninth pass): menu (nav) images of 75 English dev sites, at most 2 items a
    # site.  The furniture rule holds their junk out (2 of 93 kept; 10 without the rule) and
    # costs no good caption there (docs/captions.md, "Ninth pass").
    menus = english["dev-s10"]["all"]
    assert menus["n_junk"] >= 90 and menus["junk_kept"] <= 0.05
    # Sample 11: thumbnails with no role declared under 300 px both ways whose page names a
    # larger version: with the rescue their good captions reach a pair (2 of 38 lost: the
    # one-word "megaphone", and a caption kept once, for the larger picture two thumbnails of
    # one page name, which the other thumbnail's label does not find).
    thumbs = english["dev-s11"]["all"]
    assert thumbs["n_good"] >= 35 and thumbs["good_lost_pair"] <= 0.1
    # Sample 12: header images of 104 English dev sites, one item a site: no junk kept
    headers = english["dev-s12"]["all"]
    assert headers["n_junk"] >= 95 and headers["junk_kept"] <= 0.05
    # Sample 13 (tenth pass): thumbnails a resizing CDN serves under 300 px, at most 4 items a
    # site: asked for at 300 px, their good captions reach a pair (0 of 10 lost; 9 without
    # the rule); of 5 junk items one is kept (an ad network's headline, as without the rule)
    resized = english["dev-s13"]["all"]
    assert resized["n_good"] >= 10 and resized["good_lost_pair"] <= 0.1
    assert resized["junk_kept"] <= 0.2


def test_the_fresh_dev_sample_14(english):
    # Sample 14 (fifteenth pass): 130 English dev items nobody had read, drawn as the check's
    # sample 6 was (at random from every item, kept and dropped alike) but at most 3 a site.
    # Main stood at junk kept 0.049 (4 of 82), good lost 0.250 (8 of 32) on it, against dev's
    # 0.030 / 0.049: the honest estimate of how dev's rules generalise.  The pass's two role
    # fixes (TripleLift's hosts, a logo named by its link) take 2 junk items out (0.024); the 8
    # good items lost are decided kinds (docs/captions.md, "Fifteenth pass").  Sixteenth pass
    # (the sample mined): a two-word side its picture's own texts name ("Lentil Patties", "Odor
    # detectors.") is kept, 6 of 32 lost (0.188).  Bounded where it is, not at the issue's 0.05.
    fresh = english["dev-s14"]["all"]
    assert fresh["n_good"] >= 30 and fresh["n_junk"] >= 80
    assert fresh["junk_kept"] <= 0.04
    assert fresh["good_lost"] <= 0.20


# Sample 15 (sixteenth pass): 130 more English dev items nobody had read (seed 20261140, at
# most 3 a site, 95 sites: 30 good, 83 junk, 17 vague), labelled by eye after the pass's two
# fixes were committed and before anything was measured on them.  Measured once then: junk
# kept 0.072 (6 of 83), good lost 0.133 (4 of 30), as on main.  Two changes after that
# measurement, read off its failures and checked on all of dev (docs/captions.md, "Sixteenth
# pass"): the measuring tool runs the build's language step first (a page with no <html lang>
# had no page language, so "Square, Google Wallet, Venmo." lost the vocabulary test a build
# gives it), "Share on Pinterest" is a row of button words, and a text of 7 to 12 words whose
# head is a foreign name ("Poulet rôti au vin rouge (Roast Red Wine Chicken)") is kept on an
# English page when a third of its words are English rather than fastText's language: 0.060 (5
# of 83) / 0.067 (2 of 30, two one-word names).  Junk kept meets the issue's 0.08; good lost
# does not (xfail below).
# Sample 16 (seventeenth pass): 130 more English dev items nobody had read (seed 20261141, at
# most 3 a site, 88 sites: 29 good, 76 junk, 25 vague), labelled by eye and committed before
# anything was measured on them.  Measured once on main (ede9f00), before any change: junk kept
# 0.066 (5 of 76), good lost 0.103 (3 of 29), the pass's fresh estimate.  Mined after that
# (docs/captions.md, "Seventeenth pass"): a date before a semicolon opens a caption (USA TODAY
# Sports' "Jul 27, 2022; Tampa, FL, USA; ... Tom Brady ..."), "Like X on Facebook" / "Share on
# MySpace" are boilerplate, a partner's folder holds ads: 0.026 (2 of 76) / 0.069 (2 of 29: a
# slug alt "Hazelnut-cake" and a one-word "Focaccia-" on a picture taken for an ad by its
# declared 300x250).  Junk kept meets the issue's 0.08; good lost does not (xfail below).
# Sample 17 (eighteenth pass): 130 more English dev items nobody had read (seed 20261142, at
# most 3 a site, 92 sites: 30 good, 77 junk, 23 vague), labelled by eye and committed before
# anything was measured on them.  Measured once on main (7f2ba56), before any change: junk kept
# 0.117 (9 of 77), good lost 0.233 (7 of 30), the pass's fresh estimate.  Mined after that
# (docs/captions.md, "Eighteenth pass"): Title-case names count as known words in the
# vocabulary test ("Diri Kole ak Pwa recipe"), a bio picture's file name makes an avatar,
# "cookie settings" and a media call to action ("View web story for this recipe.", "Listen to
# ... our audio podcast") are boilerplate: 0.065 (5 of 77) / 0.167 (5 of 30: two 35-45 px
# heads, a one-word alt, a menu picture, a side of a 300x250 crop taken for an ad).  Neither
# of the issue's targets was met when measured; junk kept is met after mining, good lost is
# not (xfail below).
# Sample 18 (nineteenth pass): 130 more English dev items nobody had read (seed 20261143, at
# most 3 a site, 96 sites: 22 good, 82 junk, 26 vague), labelled by eye and committed (943c751)
# before anything was measured on them, then measured once on the rules as they stood after
# the pass's rule W (a one-word name of its declared picture's file, 3f89374): junk kept 0.110
# (9 of 82), good lost 0.045 (1 of 22: a 35 px head), the pass's fresh estimate.  Good lost
# meets the issue's 0.05 on a fresh sample for the first time; junk kept does not (xfail).
# Mined in the twentieth pass: a rating ("2 out of 5 stars") and a section flag ("Entertainment:
# Movies, music, clubs and more") are boilerplate: 0.085 (7 of 82), still over 0.08.
# Sample 19 (twentieth pass): 130 more English dev items nobody had read (seed 20261144, at
# most 3 a site, 93 sites: 19 good, 85 junk, 26 vague), labelled by eye and committed (69b66f4)
# before anything was measured on them, then measured once on main's rules (22b1ef8): junk
# kept 0.071 (6 of 85), good lost 0.053 (1 of 19: a one-word alt, "sweater"), the pass's fresh
# estimate.  Mined after that (docs/captions.md, "Twentieth pass"): a bare credit line
# ("Spencer Platt/Getty") is text_credit: 0.059 (5 of 85).  Junk kept meets the issue's 0.08;
# good lost misses 0.05 by that one item (xfail below).
# Sample 20 (after the twentieth pass): 130 more English dev items nobody had read (seed
# 20261145, at most 3 a site, 91 sites: 28 good, 85 junk, 17 vague), labelled by eye and
# committed (a438e07) before anything was measured on them, then measured once on main's rules
# after the twentieth pass's rules G, R and S (ed07645): junk kept 0.094 (8 of 85), good lost
# 0.000 (0 of 28), the first fresh estimate of those rules.  Good lost meets the issue's 0.05;
# junk kept does not (xfail below).  Mined in the twenty-first pass: a teaser ending in its
# byline ("Readability Is a Myth By Noah Berlatsky") is text_dateline, a call to action ("Get
# My Meal Planner") boilerplate, and a final "photo:" no credit label, so lead_in drops "... pin
# the following photo:": 0.071 (6 of 85), the issue's 0.08 met (plain assertion below).
# Sample 21 (twenty-first pass): 130 more English dev items nobody had read (seed 20261146, at
# most 3 a site, 91 sites: 35 good, 74 junk, 21 vague), labelled by eye and committed (fa50101)
# before anything was measured on them, then measured once on the pass's final rules (B, A, L,
# bfc1426): junk kept 0.068 (5 of 74), good lost 0.143 (5 of 35: every one a picture of 100 px
# or less -- two 35-75 px heads or portraits, a 24 px wiki icon, a 55 px dog in a bio box, a
# 75 px photo title -- so lost >100 is 0.000), the pass's fresh estimate.  Junk kept meets the
# issue's 0.08; good lost does not (xfail below).  Mined in the twenty-fourth pass (a
# trademark notice, "Launch Gallery Getty"): 0.041 (3 of 74).
# Sample 22 (twenty-fourth pass): 130 more English dev items nobody had read (seed 20261147, at
# most 3 a site, 85 sites: 36 good, 78 junk, 16 vague), labelled by eye and committed (988ae5b)
# before anything was measured on them, then measured once on the pass's final rules (P, F, C,
# T, 181f043): junk kept 0.038 (3 of 78), good lost 0.111 (4 of 36: three pictures of 100 px or
# less -- a 35 px artist head, a 32 px wiki icon, an 82 px celebrity teaser in a menu -- and a
# three-word recipe name beside its related thumbnail, text_too_short), the pass's fresh
# estimate.  Junk kept meets the issue's 0.08; good lost does not (xfail below).  Not mined.
# Sample 23 (twenty-sixth pass): 130 more English dev items nobody had read (seed 20261148, at
# most 3 a site, 87 sites: 34 good, 80 junk, 16 vague), labelled by eye and committed (6da7f85)
# before anything was measured on them, then measured once on main's rules (ace7d12, the
# twenty-fifth pass's D included): junk kept 0.113 (9 of 80: promo and directory alts, a
# "next story" line, a nutrition panel, an ad's copy, a section-led teaser, an image id, a
# quote fragment), good lost 0.088 (3 of 34: an undeclared menu photograph "San Francisco", a
# 75 px photo title -- both decided kinds -- and a recipe name whose parenthesised Chinese name
# is cut, leaving two words as surrounding text, text_too_short), the pass's fresh estimate.
# Both of the issue's targets are missed (xfails below).  Mined after that, with samples 14-22
# (twenty-sixth pass, rule K: a section's name glued to its teaser's headline, "News Photos of
# the Year", is boilerplate): 0.100 (8 of 80), still over 0.08; 0.075 (6 of 80) after the
# twenty-eighth pass's rules I (an image id) and F (a comma fragment), the issue's 0.08 met.
# Sample 24 (twenty-eighth pass): 130 more English dev items nobody had read (seed 20261149, at
# most 3 a site, 94 sites: 23 good, 79 junk, 28 vague), labelled by eye and committed (371716a)
# before anything was measured on them, then measured once on main's rules (25c7113): junk
# kept 0.051 (4 of 79: an about-me portrait's title, a shop's logo with its slogan, "Animation
# by ...", an ad's phone number), good lost 0.087 (2 of 23: a comma list of names read as tags,
# text_keyword_list, and a one-word "Obama" on a 320x140 picture, text_too_short; lost >100
# 0.087), the pass's fresh estimate.  Junk kept meets the issue's 0.08; good lost does not
# (xfail below).  Mined after that (rules A and P: 0.025, 2 of 79); good lost 0.043 (1 of 23)
# after the twenty-ninth pass's rule N (a list of names on a large picture is no tag list),
# the issue's 0.05 met (plain assertion below).
# Sample 25 (twenty-ninth pass): 130 more English dev items nobody had read (seed 20261150, at
# most 3 a site, 90 sites: 24 good, 81 junk, 25 vague), labelled by eye and committed (c565eff)
# before anything was measured on them, then measured once on main's rules (d677113): junk
# kept 0.099 (8 of 81: a UI title, a related line beside an icon, a shop promo, a magazine
# cover, a case-study card, a sponsored tile, an about-me portrait, an ad banner's alt), good
# lost 0.083 (2 of 24: a two-word name in a menu, text_too_short, and a Pinterest blurb opening
# "Try this", text_boilerplate; lost >100 0.083), the pass's fresh estimate.  Both of the
# issue's targets are missed (xfails below).  Mined after that: good lost 0.042 (1 of 24) after
# the twenty-ninth pass's rule M (a two-word name in a menu that its picture's headline
# repeats), the issue's 0.05 met (plain assertion below); junk kept unchanged.
# Sample 26 (thirtieth pass): measured once on main's rules (b9d50bd): junk kept 0.064 (5 of
# 78), good lost 0.061 (2 of 33: an 80 px thumbnail's Getty caption, a decided kind, and
# "Ingredients shown: mushrooms, ..." read as tags).  Mined after that: good lost 0.030 (1 of
# 33) after the thirty-first pass's rule A (a list led by a label naming what the picture shows
# is no tag list), the issue's 0.05 met (plain assertion below).
# Sample 27 (thirty-first pass): 130 more English dev items nobody had read (seed 20261152, at
# most 3 a site, 93 sites: 33 good, 73 junk, 24 vague), labelled by eye and committed (6d49363)
# before anything was measured on them, then measured once on main's rules (8d68619): junk
# kept 0.055 (4 of 73: a related story's kicker "You can do this.", a case-study card, a link
# list's logo, a site owner's portrait), good lost 0.061 (2 of 33: a 74 px related thumbnail's
# "Elizabeth Warren", a decided kind, and a recipe alt ending in "!", text_exclamation; lost
# >100 0.031), the pass's fresh estimate.  Junk kept meets the issue's 0.08, good lost did not;
# mined after that: 0.030 (1 of 33) after the thirty-first pass's rule E (a large picture's own
# exclamation in sentence case), the issue's 0.05 met (plain assertion below).
# Sample 28 (forty-second pass): 130 more English dev items nobody had read (seed 20261155, at
# most 3 a site, 95 sites: 26 good, 80 junk, 24 vague), drawn on main d973d4d (after the
# thirty-eighth to fortieth passes), labelled by eye and committed (b53972e) before anything was
# measured on them, then measured once on main's rules (d973d4d): junk kept 0.037 (3 of 80: two
# sciencemag banners and NPR's "Planet Money" blog header, alts naming a section, not the site),
# good lost 0.038 (1 of 26: a 74 px related thumbnail's "Wendy Cohen", a decided kind; lost >100
# 0.000), the pass's fresh estimate.  Both of the issue's bounds met as measured once.  The draw
# runs with page roles off, where no card title (fortieth pass) is read: the sample holds none.
# Sample 29 (forty-third pass): 130 more English dev items nobody had read (seed 20261156, at
# most 3 a site, 92 sites: 35 good, 70 junk, 25 vague), drawn on main 8adfc35 (the first draw
# whose pool holds card titles: 27 of the 130), labelled by eye and committed (a795590) before
# anything was measured on them, then measured once on main's rules (8adfc35): junk kept 0.029
# (2 of 70: a Drupal user picture's "Javasmom's picture", a figcaption holding only a Flickr
# credit), good lost 0.229 (8 of 35: four related recipes' card titles in aside / related
# regions, where page roles read no card title; two one-word names, a 48 px menu picture,
# a recipe's hero copy under a Drupal "desktop_banner" style read as an ad), the pass's fresh
# estimate.  Junk kept meets the issue's 0.08, good lost does not.  After the forty-fourth
# pass's R (a card's title by the link going where the picture's goes, in related / aside
# regions; mined on this sample's four related recipes) good lost 0.114 (4 of 35), junk kept
# unchanged; after the forty-seventh pass's D (a Drupal image style's "banner" is no ad folder:
# nestle-family's hero, mined) 0.086 (3 of 35).
# Sample 30 (forty-eighth pass): 130 more English dev items nobody had read (seed 20261157, at
# most 3 a site, 98 sites: 30 good, 62 junk, 38 vague; 25 card titles), drawn on main 03d9aca,
# labelled by eye and committed (b133e5e) before anything was measured on them, then measured
# once on main's rules (03d9aca): junk kept 0.097 (6 of 62: a cover's "undefined cover image",
# a native ad's teaser, a recipe step heading read as a card title, a credit alone, two ad
# banners' alts), good lost 0.133 (4 of 30: a related recipe's card title, two menu pictures'
# alts, a one-word side "Guacamole"), the pass's fresh estimate.  Neither bound is met.
# Sample 31 (fifty-first pass): 130 more English dev items nobody had read (seed 20261158, at
# most 3 a site, 90 sites: 27 good, 70 junk, 33 vague; 26 card titles), drawn on main 263dab8,
# labelled by eye and committed (983f5ec) before anything was measured on them, then measured
# once on main's rules (263dab8), not mined: junk kept 0.043 (3 of 70: a cover's "Table of
# Contents" link as its card title, a sponsored webinar promo's alt in an ad region, a sidebar
# widget's banner alt), good lost 0.111 (3 of 27: two undeclared menu pictures' alts as
# furniture, a teaser opening with its date as a dateline), the pass's fresh estimate.  Junk
# kept meets the issue's 0.08, good lost does not.  Fifty-second pass (C54, a picture in an
# ad region is an ad unless its alt describes a picture or it has a caption; samples 30 and 31
# now mined): sample 30 junk kept 0.065 (4 of 62; "Property Tax Campaign" no longer kept),
# sample 31 0.029 (2 of 70; the webinar promo's alt no longer kept), good lost unchanged.
# Sample 32 (fifty-third pass): 130 more English dev items nobody had read (seed 20261159, at
# most 3 a site, 92 sites: 27 good, 70 junk, 33 vague; 30 card titles), drawn on main 12dec79,
# labelled by eye and committed (c4d638d) before anything was measured on them, then measured
# once on main's rules (12dec79), not mined: junk kept 0.057 (4 of 70: a sidebar cookbook
# promo's alt, a teaser alt on an "author profile background" image, a promo gif's card title,
# a related teaser with its byline glued), good lost 0.074 (2 of 27: an Italian dish name's
# title as text_not_target, an undeclared menu picture's alt as furniture), the pass's fresh
# estimate.  Junk kept meets the issue's 0.08, good lost does not.
@pytest.mark.parametrize("sample,max_junk_kept,max_good_lost", [(15, 0.08, 0.07),
                                                                (16, 0.04, 0.07),
                                                                (17, 0.08, 0.18),
                                                                (18, 0.09, 0.05),
                                                                (19, 0.07, 0.06),
                                                                (20, 0.08, 0.02),
                                                                (21, 0.07, 0.15),
                                                                (22, 0.05, 0.12),
                                                                (23, 0.12, 0.09),
                                                                (24, 0.06, 0.05),
                                                                (25, 0.11, 0.05),
                                                                (26, 0.07, 0.04),
                                                                (27, 0.06, 0.04),
                                                                (28, 0.04, 0.04),
                                                                (29, 0.03, 0.09),
                                                                (30, 0.07, 0.10),
                                                                (31, 0.03, 0.12),
                                                                (32, 0.06, 0.08)])
def test_the_fresh_dev_samples(english, sample, max_junk_kept, max_good_lost):
    fresh = english[f"dev-s{sample}"]["all"]
    assert fresh["n_good"] >= 19 and fresh["n_junk"] >= 62  # sample 30: 62 junk
    assert fresh["junk_kept"] <= max_junk_kept
    assert fresh["good_lost"] <= max_good_lost


def _missed(sample: int, why: str):
    """A fresh sample on which one of the issue's bounds is not met: a strict expected failure
    that says why (it fails the run the day the bound is met, so the reason gets updated)."""
    return pytest.param(sample, marks=pytest.mark.xfail(strict=True, reason=f"issue 14: {why}"))


@pytest.mark.parametrize("sample", [
    _missed(15, (
        "good lost <= 0.05 is not met on the fresh dev sample 15 (0.133, 4 of 30, "
        "measured once; 0.067, 2 of 30, after the sixteenth pass's post-measurement changes: "
        "two one-word names, a menu's 'Austin' and an alt 'Telstar'; docs/captions.md)")),
    _missed(16, (
        "good lost <= 0.05 is not met on the fresh dev sample 16 (0.103, 3 of 29, "
        "measured once; 0.069, 2 of 29, after the seventeenth pass's changes: a slug alt "
        "'Hazelnut-cake' and a one-word 'Focaccia-'; docs/captions.md)")),
    _missed(17, (
        "good lost <= 0.05 is not met on the fresh dev sample 17 (0.233, 7 of 30, "
        "measured once; 0.167, 5 of 30, after the eighteenth pass's changes: two heads of "
        "45 px or less, a one-word alt, a menu picture, a 300x250 crop's side; "
        "docs/captions.md)")),
    18,
    _missed(19, (
        "good lost <= 0.05 is not met on the fresh dev sample 19 (0.053, 1 of 19, "
        "measured once on main's rules: a one-word alt 'sweater' on a 73 px product "
        "thumbnail, a decided kind; docs/captions.md)")), 20,
    _missed(21, (
        "good lost <= 0.05 is not met on the fresh dev sample 21 (0.143, 5 of 35, "
        "measured once on the twenty-first pass's rules, not mined: all five are pictures of "
        "100 px or less, never a pair -- lost >100 is 0.000; docs/captions.md)")),
    _missed(22, (
        "good lost <= 0.05 is not met on the fresh dev sample 22 (0.111, 4 of 36, "
        "measured once on the twenty-fourth pass's rules, not mined: three pictures of 100 px "
        "or less and a three-word recipe name as surrounding text; lost >100 0.030; 0.083 "
        "after the twenty-fifth pass's rule D kept 'Pichi Pichi Recipe', mined; "
        "docs/captions.md)")),
    # sample 23: 0.088 (3 of 34) when measured once on main's rules at ace7d12 (an undeclared
    # menu photograph, a 75 px photo title, a recipe name cut to two words as surrounding
    # text); 0.059 after the twenty-seventh pass's rule E (mined); 0.029 after the thirty-ninth
    # pass's K' asked Flickr for the 75 px photo's z size ("Normandy american cemetery")
    23,
    # sample 24: 0.087 (2 of 23) when measured once on main's rules at 25c7113; 0.043 after
    # the twenty-ninth pass's rule N kept "Director, Damien Chazelle, Ryan Gosling" (mined)
    24,
    # sample 25: 0.083 (2 of 24) when measured once on main's rules at d677113 (a two-word
    # name in a menu, a Pinterest blurb opening "Try this"); 0.042 after the twenty-ninth
    # pass's rule M kept the name its picture's headline repeats (mined)
    25,
    # sample 26: 0.061 (2 of 33) when measured once on main's rules at b9d50bd (an 80 px
    # thumbnail's Getty caption, an "Ingredients shown: ..." list read as tags); 0.030 after
    # the thirty-first pass's rule A kept the labelled list (mined)
    26,
    # sample 27: 0.061 (2 of 33) when measured once on main's rules at 8d68619 (a 74 px
    # thumbnail's name, a recipe alt ending in "!"); 0.030 after the thirty-first pass's
    # rule E kept the alt (mined)
    27,
    # sample 28: 0.038 (1 of 26) when measured once on main's rules at d973d4d (a 74 px
    # thumbnail's name, a decided kind): met as first measured
    28,
    _missed(29, (
        "good lost <= 0.05 is not met on the fresh dev sample 29 (0.229, 8 of 35, "
        "measured once on main's rules at 8adfc35: four card titles of related recipes in "
        "aside / related regions, where page roles read no card title (each picture's own "
        "good alt kept); 'Milan' and 'Lemurosaurus', one word; a 48 px menu picture; a "
        "recipe hero's copy under a Drupal 'desktop_banner' style, role ad (its other copy "
        "keeps the alt); 0.114, 4 of 35, after the forty-fourth pass's R read the four card "
        "titles (mined); 0.086, 3 of 35, after the forty-seventh pass's D read the hero "
        "(mined): the three others remain; docs/captions.md)")),
    _missed(30, (
        "good lost <= 0.05 is not met on the fresh dev sample 30 (0.133, 4 of 30, "
        "measured once on main's rules at 03d9aca: a related recipe's card title not read, "
        "two menu pictures' alts ('On The Cover: Chris Hemsworth', 'Washington, D.C.') as "
        "furniture, a one-word side 'Guacamole'; 0.100, 3 of 30, after the forty-eighth "
        "pass's U read the card title (mined): the three others remain; docs/captions.md)")),
    _missed(31, (
        "good lost <= 0.05 is not met on the fresh dev sample 31 (0.111, 3 of 27, "
        "measured once on main's rules at 263dab8, not mined: two undeclared menu pictures' "
        "alts ('The Rocky Terrain of the Via Ferrata', 'Rome') as furniture, a teaser "
        "'2 January 2015 Rosie Huntington Whiteley Goes For A Lob' as text_dateline; "
        "docs/captions.md)")),
    _missed(32, (
        "good lost <= 0.05 is not met on the fresh dev sample 32 (0.074, 2 of 27, "
        "measured once on main's rules at 12dec79, not mined: cbslocal's title 'Carpaccio di "
        "Capesante' as text_not_target, an undeclared menu picture's alt 'Florence' as "
        "furniture; docs/captions.md)"))])
def test_the_issues_good_lost_target_on_the_fresh_dev_samples(english, sample):
    assert english[f"dev-s{sample}"]["all"]["good_lost"] <= 0.05


@pytest.mark.parametrize("sample", [15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
                                    29, 30, 31, 32])
def test_the_issues_junk_kept_target_on_the_fresh_dev_samples(english, sample):
    # samples 15 to 17 meet it after their passes' changes (0.048, 0.026, 0.065); sample 19
    # as first measured (0.071) and after the twentieth pass (0.059); sample 20 not as first
    # measured (0.094), after the twenty-first pass's rules (mined) 0.071; sample 21 as
    # measured once on them (0.068; 0.041 after the twenty-fourth pass's, mined); sample 22
    # as measured once on the twenty-fourth pass's rules (0.038); samples 18 and 23 not as
    # first measured (0.110, 0.113), after the twenty-eighth pass's rules I and F (mined) 0.073
    # and 0.075 (an image id, a quote fragment ending in a comma); sample 24 as measured once
    # on main's rules (0.051); sample 25 not as measured once (0.099), after the thirtieth
    # pass's rules L' and B (mined) 0.074 (an ad banner behind a "/linkout/" link, an about
    # box's "About Jenna"); samples 26, 27, 28, 29, 31 and 32 as measured once on main's rules
    # (0.064, 0.055, 0.037, 0.029, 0.043, 0.057); sample 30 not as measured once (0.097, 6 of 62:
    # 'undefined cover image', a native ad's teaser, a recipe step heading as a card title, a
    # credit alone, two ad banners' alts), 0.081 on main at c3c2108, 0.065 (4 of 62) after
    # the fifty-second pass's C54 dropped a banner in an ad region (mined)
    assert english[f"dev-s{sample}"]["all"]["junk_kept"] <= 0.08


# The mostly German real_pages, split by site (seventh pass, docs/captions.md "Seventh pass"):
# de-dev (samples 2, 3 and 9 of its pages) is where the seventh and eighth passes' rules were
# written, at junk kept 0.049 (0.053 before the ninth pass), good lost 0.059 (0.118 before the
# eighth pass's menu photographs; 0.053 / 0.044 since the twelfth pass: a table's header is no
# site header); de-check (samples 2 and 3 of the other sites), measured once a pass with the
# rules frozen, at 0.098 / 0.316 (as on main in the seventh to ninth passes: no rule moved it).
# Bounds: what was measured, with a small margin; the issue's targets are strict xfails where
# missed.
DE_DEV_MAX_JUNK_KEPT, DE_DEV_MAX_GOOD_LOST = 0.06, 0.07
DE_CHECK_MAX_JUNK_KEPT, DE_CHECK_MAX_GOOD_LOST = 0.11, 0.33


@pytest.fixture(scope="module")
def german():
    if not os.path.isdir(PAGES_DE):
        pytest.skip("../shared/data/real_pages absent")
    labels = read_labels(LABELS_DE)
    pages = sorted({lab["page"] for lab in labels})
    result = measure(labels, all_items(pages, PAGES_DE, TARGETS_DE), thumbnails(pages, PAGES_DE))
    print("\n" + format_table(result))
    return labels, result


def test_the_german_pages_are_measured_on_de_dev_and_de_check(german):
    labels, result = german
    # split by site: de-dev to write rules on, de-check held out
    assert all(lab["split"] == de_split_of(lab["page"]) for lab in labels)
    r = result["all"]["all"]
    # the stratified samples (10, 11: menu images, thumbnails) are reported only on their own
    assert r["n_good"] + r["n_junk"] + r["n_vague"] == \
        sum(not lab.get("stratified") for lab in labels)
    dev, check = result["dev"]["all"], result["check"]["all"]
    print("de-dev", json.dumps(dev))
    print("de-check", json.dumps(check))
    assert dev["n_good"] >= 60 and dev["n_junk"] >= 200 and check["n_good"] >= 35
    assert dev["junk_kept"] <= DE_DEV_MAX_JUNK_KEPT
    assert dev["good_lost"] <= DE_DEV_MAX_GOOD_LOST
    assert check["junk_kept"] <= DE_CHECK_MAX_JUNK_KEPT
    assert check["good_lost"] <= DE_CHECK_MAX_GOOD_LOST
    assert dev["precision"] > 0.5 and check["kept"] > 0


def test_the_issues_junk_kept_target_on_de_dev(german):
    assert german[1]["dev"]["all"]["junk_kept"] <= 0.08


def test_the_issues_good_lost_target_on_de_dev(german):
    # met since the twelfth pass (0.044, 3 of 68; 0.059 before): a table's header is no site
    # header, so austria.info's picture in "table-header" is no furniture (docs/captions.md)
    assert german[1]["dev"]["all"]["good_lost"] <= 0.05


@pytest.mark.xfail(strict=True, reason="issue 14: junk kept <= 0.08 is not met on de-check (0.088 "
                   "at the end of the 2026-11-26 session, 0.098 in the seventh and eighth "
                   "passes, measured once each; docs/captions.md)")
def test_the_issues_junk_kept_target_on_de_check(german):
    assert german[1]["check"]["all"]["junk_kept"] <= 0.08


@pytest.mark.xfail(strict=True, reason="issue 14: good lost <= 0.05 is not met on de-check (0.210, "
                   "8 of 38, at the end of the 2026-11-26 session; 0.316 in the seventh and "
                   "eighth passes, measured once each: 7 of 12 were menu pictures made "
                   "furniture; docs/captions.md)")
def test_the_issues_good_lost_target_on_de_check(german):
    assert german[1]["check"]["all"]["good_lost"] <= 0.05


def test_measure_counts_kept_dropped_and_missing_items():
    labels = [{"page": "p", "image_url": "u", "source": "alt", "text": t, "label": lab,
               "split": "dev"} for t, lab in (("a good caption here", "good"),
                                              ("a junk text here", "junk"),
                                              ("another good one", "good"),
                                              ("junk that is gone", "junk"))]
    items = [{"page": "p", "image_url": "u", "source": "alt", "text": "a good caption here",
              "kept": True},
             {"page": "p", "image_url": "u", "source": "alt", "text": "a junk text here",
              "kept": True},
             {"page": "p", "image_url": "u", "source": "alt", "text": "another good one",
              "kept": False}]
    r = measure(labels, items)["dev"]["all"]
    assert (r["junk_kept"], r["good_lost"], r["good_not_extracted"], r["precision"]) == \
        (0.5, 0.5, 0, 0.5)
    assert os.path.basename(LABELS) == "real_pages_en_labels.jsonl"
    # a good item of a thumbnail counts in good lost, and apart in good_lost_reachable
    r = measure(labels, items, {("p", "u")})["dev"]["all"]
    assert (r["good_lost"], r["n_good_thumb"], r["good_lost_reachable"]) == (0.5, 2, 0.0)
    # pair level: a kept text of an image served under 300 px both ways reaches no pair
    below = [dict(it, below=it["text"] == "a junk text here") for it in items]
    r = measure(labels, below)["dev"]["all"]
    assert (r["junk_kept"], r["junk_kept_pair"], r["good_lost_pair"]) == (0.5, 0.0, 0.5)
    below = [dict(it, below=True) for it in items]
    r = measure(labels, below)["dev"]["all"]
    assert (r["junk_kept_pair"], r["good_lost_pair"]) == (0.0, 1.0)
    other = labels + [{"page": "p", "image_url": "v", "source": "alt", "text": "a good one",
                       "label": "good", "split": "dev"}]
    r = measure(other, items, {("p", "u")})["dev"]["all"]
    assert (r["n_good"], r["n_good_thumb"], r["good_lost_reachable"]) == (3, 2, 1.0)


def test_a_label_is_found_under_the_url_its_item_fetches():
    # thirty-third pass, M: a picture shown as a thumbnail naming the larger file and again as
    # that file is one candidate keyed under the thumbnail; a label naming the larger file is
    # that candidate's, and a label of another picture is not
    labels = [{"page": "p", "image_url": "big.jpg", "source": "alt", "text": "a pulled pork pile",
               "label": "good", "split": "dev"},
              {"page": "p", "image_url": "other.jpg", "source": "alt",
               "text": "a pulled pork pile", "label": "good", "split": "dev"}]
    items = [{"page": "p", "image_url": "thumb.jpg", "fetch_url": "big.jpg", "source": "alt",
              "text": "a pulled pork pile", "kept": True}]
    r = measure(labels, items)["dev"]["all"]
    assert (r["good_lost"], r["good_not_extracted"]) == (0.5, 1)
    assert measure(labels[:1], [dict(items[0], fetch_url="thumb.jpg")])["dev"]["all"][
        "good_not_extracted"] == 1


def test_a_side_label_is_found_under_the_caption_it_became():
    # thirty-eighth pass: a CMS caption element read as a side before (p.wp-caption-text) is
    # the picture's caption since; its label is that caption's, on the same picture only, and
    # a label of another source is not moved
    def lab(source, text, url="u"):
        return {"page": "p", "image_url": url, "source": source, "text": text, "label": "good",
                "split": "dev"}
    items = [{"page": "p", "image_url": "u", "source": "caption", "kept": True,
              "text": "Detail of a butterfly scale. The blue arrow points at the socket cell."}]
    assert measure([lab("surrounding", "Detail of a butterfly scale.")], items)["dev"]["all"][
        "good_lost"] == 0.0
    for label in (lab("alt", "Detail of a butterfly scale."),
                  lab("surrounding", "Detail of a butterfly scale.", url="v"),
                  lab("surrounding", "A moth")):
        assert measure([label], items)["dev"]["all"]["good_not_extracted"] == 1


def test_the_table_of_one_split_holds_no_other_splits_rows():
    labels = [{"page": "p", "image_url": "u", "source": "alt", "text": t, "label": "good",
               "split": split, **extra} for t, split, extra in (
                   ("a dev caption", "dev", {}), ("a later dev one", "dev", {"sample": 7}),
                   ("a held-out caption", "check", {}))]
    result = measure(labels, [])
    assert set(result) == {"dev", "dev-s7", "check", "all"}
    rows = {line.split()[0] for line in format_table(result, "dev").splitlines()[1:]}
    assert rows == {"dev", "dev-s7"}
    rows = {line.split()[0] for line in format_table(result).splitlines()[1:]}
    assert rows == {"dev", "dev-s7", "check", "all"}


def test_pair_below_reads_the_file_names_size_first():
    assert pair_below("https://x.org/a-150x150.jpg", None, None)
    # declared 250 px, named 360 px: the file is the named size, and reaches the image step
    assert not pair_below("https://x.org/a-360x361.jpg", 250, 250)
    assert pair_below("https://x.org/a.jpg", 200, 133)
    assert pair_below("https://x.org/a.jpg?w=200&fm=webp", None, None)
    assert not pair_below("https://x.org/a.jpg", None, None)
    assert not pair_below("https://x.org/a.jpg", 1200, None)


def test_served_size_reads_declared_named_and_asked_sizes():
    assert served_size("https://x.org/a.jpg", 96, 72) == (96, 72)
    assert served_size("https://x.org/pic-150x100.jpg", None, None) == (150, 100)
    assert served_size("https://x.org/MakeWith100x100CakeMix.jpeg", None, None) == (100, 100)
    assert served_size("https://x.org/a.jpg?rect=0,0,420,420&w=48&h=48&fm=webp", None,
                       None) == (48, 48)
    assert served_size("https://x.org/a.jpg?h=52", None, None) == (None, 52)
    assert served_size("https://x.org/a.jpg", None, None) == (None, None)
    # a Drupal image style's hash parameter asks no size
    assert served_size("https://x.org/styles/image360w/a.jpg?h=98c520fc", None, None) == (None, None)


@pytest.mark.parametrize("url", [
    "https://a.com/x.jpg#view&w=1200", "https://a.com/x.jpg?w=640#w=1200",
    "https://a.com/x.jpg?w=640", "https://a.com/x.jpg#w=48&h=48", "https://a.com/x.jpg?w=98c520fc",
])
def test_served_size_skips_the_fragment_as_query_width_does(url):
    # the fragment never reaches the server: the tool and the extractor read the same width
    from pipeline.steps.image_names import query_width
    assert (served_size(url, None, None)[0] or 0) == query_width(url)
    assert served_size("https://a.com/x.jpg#-96x72", None, None) == (None, None)
    assert not pair_below("https://a.com/x.jpg#w=48&h=48", None, None)


def test_the_german_pages_are_split_by_site():
    assert site_of("de.creativecommons.org.endlich.html") == "creativecommons.org"
    assert site_of("creativecommons.org.html") == "creativecommons.org"
    assert site_of("nationalgeographic.co.uk.goats.html") == "nationalgeographic.co.uk"
    assert site_of("blog.python.org.html") == "python.org"
    assert site_of("changelog.blog.zwischenbilanz.html") == "changelog.blog"
    assert de_split_of("chip.de.beef.html") == de_split_of("chip.de.tests.html")
    if os.path.isdir(PAGES_DE):
        from tools.caption_labels import pages_of
        splits = Counter(de_split_of(n) for n in pages_of(PAGES_DE))
        assert min(splits.values()) >= 0.4 * sum(splits.values()), splits


def test_a_stratified_draw_caps_the_items_of_a_site(monkeypatch):
    import tools.caption_draw as draw_mod
    items = [{"page": f"site{i % 3}.html", "region": region, "image_url": f"u{i}",
              "source": "alt", "text": f"t{i}"}
             for i, region in enumerate(["nav"] * 12 + ["header"] * 3)]
    monkeypatch.setattr(draw_mod, "unlabelled", lambda split, pages: list(items))
    drawn = draw_mod.draw_regions(7, {"nav": 100}, per_site=2)
    # every nav item of the three sites was eligible; at most 2 a site are taken
    assert len(drawn) == 6 and all(it["region"] == "nav" for it in drawn)
    assert Counter(it["page"] for it in drawn) == {"site0.html": 2, "site1.html": 2,
                                                   "site2.html": 2}
    assert drawn == draw_mod.draw_regions(7, {"nav": 100}, per_site=2)  # the seed decides
    assert len(draw_mod.draw_regions(7, {"nav": 4}, per_site=2)) == 4
    assert len(draw_mod.draw_regions(7, {"nav": 100})) == 12  # no cap: every item



def test_a_plain_draw_may_cap_the_items_of_a_site(monkeypatch):
    # sample 14 (fifteenth pass): at random from every item, at most N a site
    import tools.caption_draw as draw_mod
    items = [{"page": "big.html" if i < 20 else f"site{i}.html", "region": None,
              "image_url": f"u{i}", "source": "alt", "text": f"t{i}"} for i in range(30)]
    monkeypatch.setattr(draw_mod, "unlabelled", lambda split, pages: list(items))
    drawn = draw_mod.draw(11, 100, per_site=3)
    pages = Counter(it["page"] for it in drawn)
    assert pages["big.html"] == 3 and len(drawn) == 13  # the 10 other sites give one each
    assert drawn == draw_mod.draw(11, 100, per_site=3)  # the seed decides
    assert len(draw_mod.draw(11, 5, per_site=3)) == 5
    assert len(draw_mod.draw(11, 100)) == 30  # no cap: a plain random sample


_PAGE = (b"<html lang='en'><body><main><p>A picture of the old harbour.</p>"
         b"<figure><img src='/harbour.jpg' alt='Fishing boats moored in the old harbour at dawn'"
         b" width='800' height='600'><figcaption>Fishing boats moored in the old harbour at"
         b" dawn.</figcaption></figure></main></body></html>")


def test_a_folder_of_new_pages_is_drawn_and_measured(tmp_path):
    # the new-site sample (docs/captions.md): draw and measure read a folder of pages with no
    # split and no labels of its own yet
    from tools.caption_labels import main
    (tmp_path / "carrier__1.html").write_bytes(_PAGE)
    out = tmp_path / "drawn.jsonl"
    assert main(["draw", str(out), "--folder", str(tmp_path), "--seed", "1", "--n", "5",
                 "--per-site", "3"]) == 0
    drawn = [json.loads(line) for line in out.read_text().splitlines()]
    assert drawn and all(it["page"] == "carrier__1.html" for it in drawn)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({**it, "label": "good", "split": "newsite"}) + "\n"
                              for it in drawn))
    assert main(["measure", "--folder", str(tmp_path), "--labels", str(labels)]) == 0
    with pytest.raises(SystemExit):  # a folder has no labels file of its own
        main(["measure", "--folder", str(tmp_path)])


def test_dump_reads_a_folder(tmp_path):
    # dump --folder (thirty-fifth pass): every item of a folder's pages, as measure reads them
    from tools.caption_labels import main
    (tmp_path / "carrier__1.html").write_bytes(_PAGE)
    out = tmp_path / "dump.jsonl"
    assert main(["dump", str(out), "--folder", str(tmp_path)]) == 0
    items = [json.loads(line) for line in out.read_text().splitlines()]
    assert items and {it["page"] for it in items} == {"carrier__1.html"}
    assert any(it["kept"] and it["source"] == "caption" for it in items)


def test_the_new_site_builder_reads_domains_and_english():
    from tools.caption_newsite import domain, english, scan
    assert domain("www.bbc.co.uk") == "bbc.co.uk" and domain("forum.escmid.org") == "escmid.org"
    words = b"the cat is on the mat and it was in the house of a friend " * 20
    assert english(scan(b"<html><body><img><p>" + words + b"</p></body></html>"))
    assert not english(scan(b"<html lang='de'><body><p>" + words + b"</p></body></html>"))
    assert not english(scan(b"<html><body><p>der die und das ist nicht mit sich " * 30
                            + b"</p></body></html>"))


def test_the_new_site_builder_wants_an_empty_folder(tmp_path):
    from tools.caption_newsite import build
    (tmp_path / "old.html").write_bytes(b"<html></html>")
    with pytest.raises(SystemExit, match="not empty"):
        build(str(tmp_path), str(tmp_path))
    with pytest.raises(SystemExit, match="unknown sample"):
        build(str(tmp_path), str(tmp_path / "new"), "newsite9")


def test_a_recipe_page_is_named_by_its_own_url_else_by_its_test(tmp_path):
    import io
    import tarfile
    from tools.caption_newsite import _recipe_url
    root = "recipe-scrapers-1/"
    path = tmp_path / "r.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name, text in ((root + "tests/test_cake.py",
                            b"# test recipe's URL\n# https://www.cake.example.com/pie/\n"),
                           (root + "recipe_scrapers/bun.py", b'    return "bun.example.org"\n')):
            info = tarfile.TarInfo(name)
            info.size = len(text)
            tar.addfile(info, io.BytesIO(text))
    folder = root + "tests/test_data/"
    with tarfile.open(path) as tar:
        assert _recipe_url(tar, folder, "cake", ["https://own.example.net/a"]) \
            == "https://own.example.net/a"
        # a malformed canonical ("http://https://...") names no host: the test's URL does
        assert _recipe_url(tar, folder, "cake", ["http://https://x.example/"]) \
            == "https://www.cake.example.com/pie/"
        assert _recipe_url(tar, folder, "bun", []) == "https://bun.example.org"
        assert _recipe_url(tar, folder, "none", []) == ""
