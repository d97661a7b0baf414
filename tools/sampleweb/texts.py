"""The kinds of text found next to images on the web, as small fixed pools.

Each text the site uses is a :class:`Text` with its ground-truth ``kind``; only a
"descriptive" English text that describes the very picture it sits next to can be good.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

TEXT_KINDS = ("descriptive", "other_photo", "filename", "empty", "boilerplate", "spam", "adult",
              "stuffed", "all_caps", "non_english", "shared_generic")


@dataclass(frozen=True)
class Text:
    text: str
    kind: str
    lang: str = "en"


FILENAMES = ["IMG_2041.JPG", "DSC0001.jpg", "DSC_0457.JPG", "P1030442.JPG", "image001.jpg",
             "photo_12.png", "IMG_20190614_153012.jpg", "untitled-1.jpg", "20180713_101522.jpg",
             "_MG_8841.jpg", "DSCF3321.JPG", "Screenshot_2021-03-04.png"]
BOILERPLATE = ["logo", "click here", "image", "photo", "picture", "banner", "thumbnail",
               "read more", "home", "icon", "img", "spacer"]
SPAM = ["Buy now! 50% off all prints today only", "Use coupon code SAVE20 at checkout",
        "Only $19.99 - free shipping on orders over $50", "Best price guaranteed!!! Order now",
        "Click here to win a free iPhone 15", "Cheap flights from $49, book today",
        "Limited offer: 2 for 1 on canvas prints with code SPRING2024",
        "Get 70% OFF designer bags - shop the sale", "Lose 10 kg in 10 days, doctors hate this trick",
        "Earn $5000 a week from home, no experience needed"]
# A small list of mildly adult phrases: enough to exercise a porn/spam word filter.
ADULT = ["Hot sexy singles in your area tonight", "Free xxx videos and nude pics",
         "Sexy lingerie models uncensored gallery", "Adult dating for naughty grown-ups",
         "Erotic massage near you, open late", "Busty babes in bikinis, 18+ only"]
ALL_CAPS = ["WOW!!! YOU WON'T BELIEVE THIS PICTURE", "BEST PHOTO EVER CLICK NOW",
            "AMAZING DEAL DON'T MISS OUT", "LOOK AT THIS!!! MUST SEE", "FREE DOWNLOAD HD WALLPAPER NOW"]
CONTEXT = ["Click to enlarge.", "Photo: staff photographer.", "Posted on 12 March 2021 by Anna.",
           "Share this on social media.", "(c) 2019 All rights reserved.", "Image via our archive."]
GENERIC_ALT = "Our team at work"  # on more than ten different photos: aggregation must drop it
GENERIC_TITLE = "Stock photo"
STUFF_WORDS = {"space": "space", "people": "portrait", "animal": "animal", "food": "coffee",
               "object": "vintage", "medical": "eye", "texture": "texture", "flower": "flower",
               "building": "travel", "water": "water", "plant": "nature", "landscape": "landscape"}

CHROME = {  # site furniture texts per page language: (logo alt, click-here, read-more, spam)
    "en": ("logo", "click here", "read more", "Buy now! 50% off all prints today only"),
    "de": ("Logo", "Hier klicken", "Weiterlesen", "Jetzt kaufen! 50% Rabatt auf alles"),
    "fr": ("Logo", "Cliquez ici", "Lire la suite", "Achetez maintenant ! -50 % sur tout"),
}

BODY = {
    "en": ["We spent the afternoon walking around and talking about the week ahead.",
           "The weather changed quickly, so we packed our things and headed back early.",
           "Several readers asked us for more pictures, so here is another one from the archive.",
           "This post is part of our weekly series on everyday things worth a closer look.",
           "Leave a comment below and tell us what you think about it.",
           "Our editors pick one picture every week and write a few lines about it."],
    "de": ["Wir haben den Nachmittag mit einem Spaziergang verbracht und über die Woche gesprochen.",
           "Das Wetter schlug schnell um, also packten wir zusammen und fuhren früher zurück.",
           "Viele Leserinnen und Leser wollten mehr Bilder sehen, hier ist ein weiteres aus dem Archiv.",
           "Dieser Beitrag gehört zu unserer wöchentlichen Reihe über alltägliche Dinge."],
    "fr": ["Nous avons passé l'après-midi à nous promener en parlant de la semaine à venir.",
           "Le temps a vite changé, alors nous sommes rentrés plus tôt que prévu.",
           "Plusieurs lecteurs nous ont demandé d'autres photos, en voici une de nos archives.",
           "Cet article fait partie de notre série hebdomadaire sur les choses du quotidien."],
}
TITLES = {"en": "Photo of the day", "de": "Bild des Tages", "fr": "Photo du jour"}
PROPER_NOUNS = {"Falcon", "Hubble", "Commodore", "NASA"}
LEAD = {"en": "The picture below shows {}.", "de": "Das Bild zeigt {}.", "fr": "La photo montre {}."}


class TextPool:
    """Seeded choices of texts of each kind for a picture, from ``captions.json``."""

    def __init__(self, captions: dict, rng: random.Random):
        self.captions = captions
        self.rng = rng

    def descriptive(self, group: str, i: int = 0) -> Text:
        c = self.captions[group]
        options = [c["caption"]] + c["alternatives"]
        return Text(options[i % len(options)], "descriptive")

    def lead(self, group: str, lang: str = "en") -> Text:
        """A sentence of surrounding text that describes the picture."""
        if lang == "en":
            cap = self.captions[group]["alternatives"][0]
            if cap.split()[0] not in PROPER_NOUNS:
                cap = cap[0].lower() + cap[1:]
            return Text(LEAD["en"].format(cap), "descriptive")
        return Text(LEAD[lang].format(self.translation(group, lang).text), "non_english", lang)

    def other_photo(self, group: str) -> Text:
        """Clean English that describes a different picture (of another theme)."""
        theme = self.captions[group]["theme"]
        others = sorted(g for g, c in self.captions.items() if c["theme"] != theme)
        return Text(self.captions[self.rng.choice(others)]["caption"], "other_photo")

    def translation(self, group: str, lang: str) -> Text:
        c = self.captions[group]
        c = c if lang in c else self.captions[c["parent"]]
        return Text(c[lang], "non_english", lang)

    def stuffed(self, group: str) -> Text:
        w = STUFF_WORDS[self.captions[group]["theme"]]
        return Text(f"{w} {w}s {w} photo {w} pictures {w} images free {w} wallpaper hd best {w} "
                    f"stock {w} {w} download", "stuffed")

    def pick(self, kind: str, group: str | None = None) -> Text:
        """A text of ``kind`` (for "descriptive" and its relatives, about ``group``)."""
        r = self.rng
        if kind == "descriptive":
            return self.descriptive(group, r.randrange(3))
        if kind == "other_photo":
            return self.other_photo(group)
        if kind == "non_english":
            return self.translation(group, r.choice(["de", "fr"]))
        if kind == "stuffed":
            return self.stuffed(group)
        if kind == "empty":
            return Text("", "empty")
        pool = {"filename": FILENAMES, "boilerplate": BOILERPLATE, "spam": SPAM, "adult": ADULT,
                "all_caps": ALL_CAPS}[kind]
        return Text(r.choice(pool), kind)
