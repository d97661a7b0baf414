"""The sample web's page plan: which pictures and texts go on which page.

Sections mimic a small media site: photo articles (the bulk, with every kind of alt text),
galleries (thumbnails, file-name alts, lazy images, ``<base href>``), a shop (clip art and
spam), reports (charts and screenshots with descriptive alts), a team section (one generic
caption on many different photos), German and French sections, promotional pages (adult,
keyword-stuffed, all-caps texts), index pages, and a few deliberately odd pages (broken
markup, a cp1252 page). All choices come from one seeded ``random.Random``.
"""
from __future__ import annotations

import random

from .images import SiteImage
from .pages import Slot, SitePage
from .texts import (BODY, CHROME, CONTEXT, GENERIC_ALT, GENERIC_TITLE, SPAM, TITLES, Text,
                    TextPool)

N_ARTICLES, N_GALLERY, N_SHOP, N_REPORTS, N_TEAM, N_DE, N_FR, N_PROMO, N_BROKEN = (
    90, 20, 20, 15, 14, 16, 12, 12, 3)
ALT_KINDS = {"descriptive": 40, "other_photo": 18, "filename": 10, "empty": 8, "boilerplate": 8,
             "spam": 5, "stuffed": 5, "non_english": 4, "all_caps": 3, "adult": 3}
ARTICLE_STYLES = ["figure", "para", "img", "picture", "lazy"]
PER_INDEX = 10


class Layout:
    """Builds the list of :class:`SitePage` from the image catalogue and the captions."""

    def __init__(self, images: dict[str, SiteImage], captions: dict, rng: random.Random):
        self.images, self.captions, self.rng = images, captions, rng
        self.pool = TextPool(captions, rng)
        self.groups = sorted(captions)  # one per distinct photo (originals and crops)
        self.variants: dict[str, list[SiteImage]] = {}
        for img in images.values():
            if img.content == "natural":
                self.variants.setdefault(img.group, []).append(img)
        for v in self.variants.values():
            v.sort(key=lambda i: i.path)
        self.clipart = sorted((i for i in images.values() if i.content == "clipart"), key=lambda i: i.path)
        self.graphics = sorted((i for i in images.values() if i.content == "graphic"), key=lambda i: i.path)
        self.ui = {i.path[3:].rsplit(".", 1)[0]: i for i in images.values() if i.content == "ui"}

    # -- helpers -----------------------------------------------------------------------
    def main_image(self, group: str) -> SiteImage:
        """The picture's own file, or (a third of the time) a large near-duplicate of it."""
        big = [v for v in self.variants[group] if v.kind == "natural" and v.variant != "webp"]
        own = [v for v in big if v.variant in ("original", "crop")][0]
        others = [v for v in big if v is not own]
        return self.rng.choice(others) if others and self.rng.random() < 0.33 else own

    def alt_kind(self) -> str:
        kinds, weights = zip(*ALT_KINDS.items())
        return self.rng.choices(kinds, weights)[0]

    def chrome(self, lang: str, footer: bool = True) -> list[Slot]:
        logo, click, _, spam = CHROME[lang]
        out = [Slot(self.ui["logo"], alt=Text(logo, "boilerplate", lang)),
               Slot(self.ui["icon_search"], alt=Text("", "empty", lang)),
               Slot(self.ui["ad_leaderboard"], alt=Text(spam, "spam", lang),
                    title=Text(click, "boilerplate", lang), style="thumb")]
        if footer:
            out += [Slot(self.ui["icon_facebook"], alt=Text("facebook", "boilerplate")),
                    Slot(self.ui["icon_twitter"], alt=Text("twitter", "boilerplate")),
                    Slot(self.ui["spacer"], alt=Text("", "empty", lang))]
        return out

    def body(self, lang: str, n: int = 2) -> list[str]:
        return [f"<p>{s}</p>" for s in self.rng.sample(BODY[lang], n)]

    # -- sections ----------------------------------------------------------------------
    def article(self, i: int, group: str, style: str, force_good: bool) -> SitePage:
        img = self.main_image(group)
        kind = "descriptive" if force_good and style not in ("figure", "para") else self.alt_kind()
        slot = Slot(img, alt=self.pool.pick(kind, group), style=style)
        if style == "figure":
            slot.caption = self.pool.descriptive(group, 1)
        elif style == "para":
            slot.before = self.pool.lead(group)
            slot.after = Text(self.rng.choice(CONTEXT), "boilerplate")
        elif style == "picture":
            slot.sources = [v for v in self.variants[group] if v is not img and v.variant != "thumb"][:2]
            if not slot.sources:
                slot.style = "img"
        elif style == "lazy":
            slot.placeholder = self.ui["spacer"]
        if style == "img" and self.rng.random() < 0.5:
            slot.title = self.pool.descriptive(group, 2)
        blocks = self.body("en", 1) + [slot] + self.body("en", 1)
        if i % 3 == 0:
            g = self.graphics[i % len(self.graphics)]
            blocks.append(Slot(g, alt=Text(g.description, "descriptive"), style="figure",
                               caption=Text(f"Figure: {g.description}", "descriptive")))
        if i % 4 == 1:
            c = self.clipart[i % len(self.clipart)]
            blocks.append(Slot(c, alt=Text(c.description, "descriptive")))
        week = self.images["photos/cat.jpg"]  # the same picture and text on every article
        side = [Slot(week, alt=self.pool.descriptive("cat", 0), style="figure",
                     caption=Text("Photo of the week", "boilerplate"))]
        return SitePage(f"articles/{i + 1:04d}.html", "en", f"{TITLES['en']} #{i + 1}", blocks,
                        side, url_style=["root", "abs", "rel"][i % 3], chrome=self.chrome("en"))

    def articles(self) -> list[SitePage]:
        order = self.groups[:]
        self.rng.shuffle(order)
        out = []
        for i in range(N_ARTICLES):
            style = ARTICLE_STYLES[i % len(ARTICLE_STYLES)]
            # The first pass gives every photo at least one good text somewhere.
            out.append(self.article(i, order[i % len(order)], style, i < len(order)))
        return out

    def broken(self) -> list[SitePage]:
        out = []
        for i in range(N_BROKEN):
            group = self.rng.choice(self.groups)
            page = self.article(1000 + i, group, ["para", "img", "figure"][i], True)
            page.path, page.broken = f"articles/old-{i + 1}.html", True
            page.chrome = self.chrome("en", footer=False)  # the page is cut off in its footer
            out.append(page)
        return out

    def cp1252(self) -> SitePage:
        img = self.images["photos/coffee.jpg"]
        slot = Slot(img, alt=Text("Espresso in a red cup on the wooden café table – with a silver spoon",
                                  "descriptive"), style="figure",
                    caption=Text("Our barista’s “perfect” espresso, served at the café for €2", "descriptive"))
        blocks = ["<p>Café culture: a short note written in an old editor that saves Windows-1252.</p>", slot]
        return SitePage("articles/cafe-legacy.html", "en", "Café notes – espresso", blocks,
                        encoding="cp1252", chrome=self.chrome("en"))

    def galleries(self) -> list[SitePage]:
        out = []
        for i in range(N_GALLERY):
            groups = self.rng.sample(self.groups, 8)
            base = "photos/" if i < 2 else None
            blocks = []
            for g in groups[:6]:
                thumb = [v for v in self.variants[g] if v.variant == "thumb"][0]
                kind = self.rng.choice(["filename", "empty", "descriptive", "boilerplate", None])
                alt = None if kind is None else self.pool.pick(kind, g)
                blocks.append(Slot(thumb, alt=alt, style="thumb", sources=[self.images[f"photos/{g}.jpg"]]))
            for j, g in enumerate(groups[6:]):
                img = self.images[f"photos/{g}.jpg"]
                kind = self.rng.choice(["filename", "descriptive", "empty", "boilerplate", "other_photo"])
                slot = Slot(img, alt=self.pool.pick(kind, g), style="lazy" if j == 0 else "img",
                            placeholder=self.ui["spacer"])
                if self.rng.random() < 0.5:
                    slot.title = self.pool.descriptive(g, 1)
                blocks.append(slot)
            out.append(SitePage(f"gallery/{i + 1:03d}.html", "en", f"Gallery {i + 1}", blocks,
                                url_style="rel", base_href=base, chrome=self.chrome("en")))
        return out

    def shop(self) -> list[SitePage]:
        out = []
        for i in range(N_SHOP):
            blocks = []
            for c in self.rng.sample(self.clipart, 3):
                alt = Text(c.description, "descriptive") if self.rng.random() < 0.5 else self.pool.pick("spam")
                price = Text(f"Only ${self.rng.randint(3, 49)}.99 - add to cart today", "spam")
                blocks.append(Slot(c, alt=alt, caption=price, style="figure"))
            blocks.append(Slot(self.ui["button_buy"], alt=Text("Buy now", "spam")))
            if i % 2 == 0:
                g = self.rng.choice(self.groups)
                kind = self.rng.choice(["spam", "stuffed", "adult"])
                blocks.append(Slot(self.main_image(g), alt=self.pool.pick(kind, g),
                                   title=Text(self.rng.choice(SPAM), "spam")))
            sale = self.images["graphics/sale_banner.jpg"]
            blocks.append(Slot(sale, alt=Text("SUMMER SALE 50% OFF EVERYTHING", "all_caps")))
            out.append(SitePage(f"shop/{i + 1:03d}.html", "en", f"Shop - deals page {i + 1}", blocks,
                                url_style="abs", chrome=self.chrome("en")))
        return out

    def reports(self) -> list[SitePage]:
        out = []
        for i in range(N_REPORTS):
            blocks = []
            for k, g in enumerate(self.rng.sample(self.graphics, 3)):
                d = Text(g.description, "descriptive")
                if k == 0:
                    blocks.append(Slot(g, alt=d, style="figure", caption=Text(f"Figure {k + 1}: {g.description}", "descriptive")))
                elif k == 1:
                    blocks.append(Slot(g, alt=Text("chart", "boilerplate"), style="para",
                                       before=Text(f"As the {g.description.lower()} shows, the trend is clear.", "descriptive"),
                                       after=Text(self.rng.choice(CONTEXT), "boilerplate")))
                else:
                    blocks.append(Slot(g, alt=self.pool.pick(self.rng.choice(["filename", "empty"]))))
            out.append(SitePage(f"reports/{i + 1:03d}.html", "en", f"Monthly report {i + 1}", blocks,
                                url_style="root", chrome=self.chrome("en")))
        return out

    def team(self) -> list[SitePage]:
        out = []
        for i, g in enumerate(self.rng.sample(self.groups, N_TEAM)):
            slot = Slot(self.images[f"photos/{g}.jpg"], alt=Text(GENERIC_ALT, "shared_generic"),
                        title=Text(GENERIC_TITLE, "shared_generic") if i < 12 else None)
            av = self.ui[f"avatar_{i % 3 + 1}"]
            blocks = self.body("en", 1) + [slot, Slot(av, alt=Text("profile picture", "boilerplate"))]
            out.append(SitePage(f"team/{i + 1:03d}.html", "en", f"Meet the team, part {i + 1}", blocks,
                                url_style="root", chrome=self.chrome("en")))
        return out

    def foreign(self, lang: str, n: int) -> list[SitePage]:
        out = []
        for i, g in enumerate(self.rng.sample(self.groups, n)):
            img = self.main_image(g)
            t = self.pool.translation(g, lang)
            if i % 2 == 0:
                slot = Slot(img, alt=t, style="figure", caption=t)
            else:
                slot = Slot(img, alt=t, style="para", before=self.pool.lead(g, lang))
            blocks = self.body(lang, 1) + [slot] + self.body(lang, 1)
            out.append(SitePage(f"{lang}/{i + 1:03d}.html", lang, f"{TITLES[lang]} {i + 1}", blocks,
                                url_style="rel", chrome=self.chrome(lang)))
        return out

    def promo(self) -> list[SitePage]:
        out = []
        for i in range(N_PROMO):
            blocks = []
            for k, g in enumerate(self.rng.sample(self.groups, 2)):
                kind = ["adult", "stuffed", "all_caps", "spam"][(2 * i + k) % 4]
                blocks.append(Slot(self.main_image(g), alt=self.pool.pick(kind, g),
                                   title=self.pool.pick("all_caps") if k == 0 else None))
            out.append(SitePage(f"promo/{i + 1:03d}.html", "en", f"Hot deals {i + 1}", blocks,
                                url_style="abs", chrome=self.chrome("en")))
        return out

    def indexes(self, sections: dict[str, list[SitePage]]) -> list[SitePage]:
        out = []
        arts = sections["articles"]
        n_idx = (len(arts) + PER_INDEX - 1) // PER_INDEX
        for j in range(n_idx):
            chunk = arts[j * PER_INDEX:(j + 1) * PER_INDEX]
            blocks = []
            for p in chunk:  # a small thumbnail of the article's picture, captioned
                main = next(b for b in p.blocks if isinstance(b, Slot) and b.image.content == "natural")
                thumb = [v for v in self.variants[main.image.group] if v.variant == "thumb"][0]
                blocks.append(Slot(thumb, alt=self.pool.descriptive(main.image.group, 0), style="thumb",
                                   sources=[main.image]))
            path = "articles/index.html" if j == 0 else f"articles/index-{j + 1}.html"
            links = [(p.title, p.path) for p in chunk]
            if j + 1 < n_idx:
                links.append(("Older posts", f"articles/index-{j + 2}.html"))
            out.append(SitePage(path, "en", f"Articles, page {j + 1}", blocks, links=links,
                                chrome=self.chrome("en")))
        for name, pages in sorted(sections.items()):
            if name == "articles":
                continue
            lang = name if name in ("de", "fr") else "en"
            out.append(SitePage(f"{name}/index.html", lang, name.title(), [],
                                links=[(p.title, p.path) for p in pages], chrome=self.chrome(lang)))
        home_links = [(p.title, p.path) for p in out] + [("Brochure (PDF)", "downloads/brochure.pdf")]
        out.insert(0, SitePage("index.html", "en", "Northwind Media", self.body("en", 2), links=home_links,
                               chrome=self.chrome("en")))
        return out

    def archive(self, used: set[str]) -> list[SitePage]:
        """Pages for the files no other page shows, so every file on disk is on the site."""
        left = sorted(p for p in self.images if p not in used)
        out = []
        for j in range(0, len(left), 4):
            blocks = []
            for path in left[j:j + 4]:
                img = self.images[path]
                if img.content == "natural":
                    alt = self.pool.pick(self.rng.choice(["descriptive", "filename", "other_photo"]), img.group)
                elif img.description:
                    alt = Text(img.description, "descriptive")
                else:
                    alt = Text("", "empty")
                blocks.append(Slot(img, alt=alt))
            out.append(SitePage(f"archive/{j // 4 + 1:03d}.html", "en", f"From the archive {j // 4 + 1}",
                                blocks, url_style="rel", chrome=self.chrome("en")))
        return out

    def build(self) -> list[SitePage]:
        sections = {"articles": self.articles() + self.broken() + [self.cp1252()],
                    "gallery": self.galleries(), "shop": self.shop(), "reports": self.reports(),
                    "team": self.team(), "de": self.foreign("de", N_DE), "fr": self.foreign("fr", N_FR),
                    "promo": self.promo()}
        used = set()
        for pages in sections.values():
            for page in pages:
                for slot in page.chrome + page.sidebar + [b for b in page.blocks if isinstance(b, Slot)]:
                    used.update(i.path for i in [slot.image, slot.placeholder, *slot.sources] if i)
        sections["archive"] = self.archive(used)
        pages = self.indexes(sections)
        for name in sorted(sections):
            pages += sections[name]
        return pages
