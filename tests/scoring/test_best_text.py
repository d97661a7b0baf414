"""best_text and text_share: the best text wins; over-shared texts are dropped; nothing else is."""
from pipeline.core.records import Candidate, ImageFacts, Pair
from pipeline.core.stage import Keep
from scoring.best_text import BestText
from scoring.text_share import SharedText, normalise_text


def pair(sha, text, score=None, source="alt", page="http://p/1"):
    c = Candidate(page_url=page, image_url=f"http://i/{sha}", text_source=source, text=text,
                  raw_text=text)
    image = ImageFacts(image_url=c.image_url, data=b"", width=1, height=1, orig_width=1,
                       orig_height=1, orig_format="jpeg", orig_bytes=0, sha256=sha)
    return Pair(key=sha[:24], candidate=c, image=image, score=score)


def kept(events):
    return [o for e in events if isinstance(e, Keep) for o in e.outputs]


def test_best_scored_text_wins_whatever_the_order():
    pairs = [pair("a" * 64, "a dog on a beach", 0.4), pair("a" * 64, "a brown dog running on sand", 0.9),
             pair("a" * 64, "dog", 0.1)]
    for order in (pairs, pairs[::-1]):
        events = BestText().events("a" * 64, order)
        assert [p.candidate.text for p in kept(events)] == ["a brown dog running on sand"]
        assert sorted(e.reason for e in events if not isinstance(e, Keep)) == ["best_text_not_best"] * 2


def test_ties_break_by_source_then_content():
    a = pair("b" * 64, "a cat asleep", source="surrounding")
    b = pair("b" * 64, "a cat asleep on a sofa", source="alt")
    assert kept(BestText().events("k", [a, b]))[0] is b


def test_over_shared_text_dropped_and_nothing_else():
    stage = SharedText(max_images_per_text=2)
    shared = [pair(c * 64, "Stock photo") for c in "abc"]
    assert [e.reason for e in stage.events("stock photo", shared)] == ["text_share_too_many_images"] * 3
    two = [pair(c * 64, "Our team") for c in "ab"] + [pair("a" * 64, "our team!")]
    assert len(kept(stage.events("our team", two))) == 3  # 2 distinct images: kept
    assert normalise_text("Our  TEAM!") == normalise_text("our team")


def test_scored_pairs_of_many_images_one_winner_each_and_only_over_shared_texts_dropped():
    from collections import Counter

    pairs = [pair(c * 64, f"text {c} {i}", score=i / 10) for c in "abcd" for i in range(3)]
    pairs += [pair(c * 64, "Our team", score=0.99) for c in "abc"]  # shared by 3 > K=2 images
    share = SharedText(max_images_per_text=2)
    groups = {}
    for p in pairs:
        groups.setdefault(share.key(p), []).append(p)
    survivors, reasons = [], Counter()
    for k, g in sorted(groups.items()):
        for e in share.events(k, g):
            if isinstance(e, Keep):
                survivors += e.outputs
            else:
                reasons[e.reason] += 1
    assert reasons == {"text_share_too_many_images": 3}
    by_image = {}
    for p in survivors:
        by_image.setdefault(p.image.sha256, []).append(p)
    winners = [o for k, g in sorted(by_image.items()) for o in kept(BestText().events(k, g))]
    assert sorted(p.candidate.text for p in winners) == [f"text {c} 2" for c in "abcd"]
