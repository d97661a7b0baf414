"""Minimal pages reproducing the caption markup that CMSes and site generators write
(thirty-eighth pass, docs/captions.md): one per convention, each from the CMS's own template
code or documentation, named in ``SOURCE``.  The caption is always "A fishing boat leaves the
harbour at dawn" (8 words, a plain description) and the picture a 600 x 400 upload, so that
only the markup differs; ``tests/pipeline/steps/test_cms_captions.py`` asserts what the
extractor reads from each.
"""
from __future__ import annotations

CAPTION = "A fishing boat leaves the harbour at dawn"
IMG = '<img src="/uploads/2024/05/boat.jpg" alt="" width="600" height="400">'
PROSE = ("<p>The port has been working since the twelfth century, and the boats still go out "
         "before the sun is up.</p>")

# convention -> (source of the markup, the markup around the picture)
PAGES: dict[str, tuple[str, str]] = {
    # WordPress core, wp-includes/media.php img_caption_shortcode(): the [caption] shortcode
    # without html5 'caption' theme support (the default of classic themes).
    "wordpress caption (div)": (
        "WordPress img_caption_shortcode(), no html5 caption support",
        f'<div id="attachment_12" style="width: 610px" class="wp-caption aligncenter">'
        f'<a href="/uploads/2024/05/boat.jpg">{IMG}</a>'
        f'<p id="caption-attachment-12" class="wp-caption-text">{CAPTION}</p></div>'),
    # The same function with add_theme_support('html5', ['caption']).
    "wordpress caption (figure)": (
        "WordPress img_caption_shortcode(), html5 caption support",
        f'<figure id="attachment_12" aria-describedby="caption-attachment-12" '
        f'style="width: 600px" class="wp-caption aligncenter">{IMG}'
        f'<figcaption id="caption-attachment-12" class="wp-caption-text">{CAPTION}'
        f'</figcaption></figure>'),
    # WordPress's [gallery] shortcode, gallery_shortcode() in media.php, no html5 gallery
    # support: itemtag dl, icontag dt, captiontag dd.
    "wordpress gallery (dl)": (
        "WordPress gallery_shortcode(), no html5 gallery support",
        f'<div id="gallery-1" class="gallery galleryid-5 gallery-columns-3 gallery-size-'
        f'thumbnail"><dl class="gallery-item"><dt class="gallery-icon landscape">'
        f'<a href="/uploads/2024/05/boat.jpg">{IMG}</a></dt>'
        f'<dd class="wp-caption-text gallery-caption" id="gallery-1-12">{CAPTION}</dd>'
        f'</dl><br style="clear: both"></div>'),
    # The same with html5 gallery support: itemtag figure, icontag div, captiontag figcaption.
    "wordpress gallery (figure)": (
        "WordPress gallery_shortcode(), html5 gallery support",
        f'<div id="gallery-1" class="gallery galleryid-5 gallery-columns-3">'
        f'<figure class="gallery-item"><div class="gallery-icon landscape">'
        f'<a href="/uploads/2024/05/boat.jpg">{IMG}</a></div>'
        f'<figcaption class="wp-caption-text gallery-caption" id="gallery-1-12">{CAPTION}'
        f'</figcaption></figure></div>'),
    # Gutenberg's core/image block (block-library/src/image/save.js).
    "gutenberg image": (
        "Gutenberg core/image save.js (6.x: wp-element-caption)",
        f'<figure class="wp-block-image size-large">{IMG}'
        f'<figcaption class="wp-element-caption">{CAPTION}</figcaption></figure>'),
    # Gutenberg's core/gallery before 5.9 (blocks-gallery-grid list of figures).
    "gutenberg gallery (ul)": (
        "Gutenberg core/gallery save.js before WordPress 5.9",
        f'<figure class="wp-block-gallery columns-2 is-cropped"><ul class="blocks-gallery-grid">'
        f'<li class="blocks-gallery-item"><figure>{IMG}'
        f'<figcaption class="blocks-gallery-item__caption">{CAPTION}</figcaption></figure></li>'
        f'</ul></figure>'),
    # Gutenberg's core/gallery since 5.9: nested core/image blocks.
    "gutenberg gallery (nested)": (
        "Gutenberg core/gallery save.js since WordPress 5.9 (nested image blocks)",
        f'<figure class="wp-block-gallery has-nested-images columns-default is-cropped">'
        f'<figure class="wp-block-image size-large">{IMG}'
        f'<figcaption class="wp-element-caption">{CAPTION}</figcaption></figure>'
        f'<figcaption class="blocks-gallery-caption wp-element-caption">Our trip to the coast'
        f'</figcaption></figure>'),
    # Jetpack Carousel (jetpack/modules/carousel/jetpack-carousel.php add_data_img_tags_and_
    # enqueue_assets): data attributes on every attachment image; the caption HTML-escaped.
    "jetpack carousel attrs": (
        "Jetpack Carousel add_data_img_tags_and_enqueue_assets()",
        f'<p><img src="/uploads/2024/05/boat.jpg" width="600" height="400" alt="" '
        f'data-attachment-id="12" data-orig-file="/uploads/2024/05/boat.jpg" '
        f'data-image-title="boat" data-image-description="" '
        f'data-image-caption="&lt;p&gt;{CAPTION}&lt;/p&gt;" '
        f'data-medium-file="/uploads/2024/05/boat-300x200.jpg"></p>'),
    # Blogger's post editor: a picture given a caption is put in a two-row table.
    "blogger caption table": (
        "Blogger post editor (table.tr-caption-container, td.tr-caption)",
        f'<table align="center" cellpadding="0" cellspacing="0" class="tr-caption-container" '
        f'style="margin-left: auto; margin-right: auto;"><tbody><tr><td style="text-align: '
        f'center;"><a href="https://blogger.googleusercontent.com/img/b/abc/s1600/boat.jpg" '
        f'style="margin-left: auto; margin-right: auto;"><img border="0" '
        f'data-original-height="800" data-original-width="1200" height="400" '
        f'src="https://blogger.googleusercontent.com/img/b/abc/s600/boat.jpg" width="600">'
        f'</a></td></tr><tr><td class="tr-caption" style="text-align: center;">{CAPTION}</td>'
        f'</tr></tbody></table>'),
    # MediaWiki's legacy thumbnail (Linker::makeThumbLink2).
    "mediawiki thumb (legacy)": (
        "MediaWiki Linker::makeThumbLink2 (before the 1.40 figure markup)",
        f'<div class="thumb tright"><div class="thumbinner" style="width:602px;">'
        f'<a href="/wiki/File:Boat.jpg" class="image">'
        f'<img alt="" src="/images/thumb/a/ab/Boat.jpg/600px-Boat.jpg" width="600" height="400"'
        f' class="thumbimage"></a><div class="thumbcaption"><div class="magnify">'
        f'<a href="/wiki/File:Boat.jpg" class="internal" title="Enlarge"></a></div>'
        f'{CAPTION}</div></div></div>'),
    # MediaWiki's Parsoid / 1.40+ media markup.
    "mediawiki figure (parsoid)": (
        "MediaWiki 1.40+ / Parsoid media markup (figure typeof=mw:File/Thumb)",
        f'<figure class="mw-default-size" typeof="mw:File/Thumb">'
        f'<a href="/wiki/File:Boat.jpg" class="mw-file-description">'
        f'<img src="/images/thumb/a/ab/Boat.jpg/600px-Boat.jpg" width="600" height="400" '
        f'class="mw-file-element"></a><figcaption>{CAPTION}</figcaption></figure>'),
    # Drupal's filter_caption (core/modules/filter/templates/filter-caption.html.twig).
    "drupal caption filter": (
        "Drupal filter-caption.html.twig",
        f'<figure role="group" class="caption caption-img align-center">{IMG}'
        f'<figcaption>{CAPTION}</figcaption></figure>'),
    # Ghost's image card (kg-card, @tryghost/kg-default-cards image.js).
    "ghost image card": (
        "Ghost kg-default-cards image card",
        f'<figure class="kg-card kg-image-card kg-card-hascaption">'
        f'<img src="/content/images/2024/05/boat.jpg" class="kg-image" alt="" loading="lazy" '
        f'width="600" height="400"><figcaption>{CAPTION}</figcaption></figure>'),
    # Squarespace 7.0 image block.
    "squarespace image block": (
        "Squarespace image block (sqs-block-image, image-caption-wrapper)",
        f'<div class="sqs-block image-block sqs-block-image"><div class="sqs-block-content">'
        f'<figure class="sqs-block-image-figure intrinsic" style="max-width:600px;">'
        f'<div class="image-block-outer-wrapper"><div class="intrinsic">'
        f'<img data-src="/static/boat.jpg" data-image-dimensions="600x400" alt="boat.jpg" '
        f'src="/static/boat.jpg?format=600w"></div></div>'
        f'<figcaption class="image-caption-wrapper"><div class="image-caption"><p>{CAPTION}'
        f'</p></div></figcaption></figure></div></div>'),
    # Substack's captioned image (captioned-image-container).
    "substack captioned image": (
        "Substack editor captioned image",
        f'<div class="captioned-image-container"><figure><a class="image-link image2" '
        f'href="https://substackcdn.com/image/fetch/f_auto/boat.jpg"><div class="image2-inset">'
        f'<picture><img src="https://substackcdn.com/image/fetch/w_600/boat.jpg" width="600" '
        f'height="400" alt="" class="sizing-normal"></picture></div></a>'
        f'<figcaption class="image-caption">{CAPTION}</figcaption></figure></div>'),
    # Medium's post markup (graf--figure, imageCaption).
    "medium figure": (
        "Medium post markup (graf--figure, figcaption.imageCaption)",
        f'<figure class="graf graf--figure"><div class="aspectRatioPlaceholder is-locked">'
        f'<img class="graf-image" data-image-id="boat.jpeg" data-width="600" data-height="400" '
        f'src="https://cdn-images-1.medium.com/max/800/boat.jpeg"></div>'
        f'<figcaption class="imageCaption">{CAPTION}</figcaption></figure>'),
    # Hugo's embedded figure shortcode (tpl/tplimpl/embedded/templates/shortcodes/figure.html):
    # title in an h4 inside the figcaption, caption in a p.
    "hugo figure shortcode": (
        "Hugo embedded figure shortcode (figcaption > h4 title, p caption)",
        f'<figure>{IMG}<figcaption><h4>Dawn</h4><p>{CAPTION}</p></figcaption></figure>'),
    # Sphinx / docutils HTML4 writer: the figure directive.
    "docutils figure (html4)": (
        "docutils html4css1 writer / Sphinx < 2: div.figure > p.caption",
        f'<div class="figure align-center" id="id1"><img alt="_images/boat.jpg" '
        f'src="_images/boat.jpg" width="600" height="400"><p class="caption">'
        f'<span class="caption-text">{CAPTION}</span><a class="headerlink" href="#id1" '
        f'title="Permalink to this image">¶</a></p></div>'),
    # docutils HTML5 writer / Sphinx >= 2.
    "docutils figure (html5)": (
        "docutils html5 writer / Sphinx >= 2: figure > figcaption > p",
        f'<figure class="align-center" id="id1"><img alt="_images/boat.jpg" '
        f'src="_images/boat.jpg" width="600" height="400"><figcaption><p>'
        f'<span class="caption-text">{CAPTION}</span><a class="headerlink" href="#id1" '
        f'title="Link to this image">¶</a></p></figcaption></figure>'),
    # Bootstrap's figure component.
    "bootstrap figure": (
        "Bootstrap docs, content/figures",
        f'<figure class="figure"><img src="/uploads/2024/05/boat.jpg" width="600" height="400" '
        f'class="figure-img img-fluid rounded" alt=""><figcaption class="figure-caption">'
        f'{CAPTION}</figcaption></figure>'),
    # schema.org ImageObject microdata with a caption outside a figure.
    "schema.org caption": (
        "schema.org ImageObject microdata (itemprop=caption)",
        f'<div itemprop="image" itemscope itemtype="https://schema.org/ImageObject">'
        f'<img itemprop="contentUrl" src="/uploads/2024/05/boat.jpg" width="600" height="400" '
        f'alt=""><span itemprop="caption">{CAPTION}</span></div>'),
    # fancybox (data-caption on the link) and Lightbox2 (data-title).
    "fancybox link": (
        "fancybox docs: <a data-fancybox data-caption>",
        f'<a href="/uploads/2024/05/boat-big.jpg" data-fancybox="gallery" '
        f'data-caption="{CAPTION}"><img src="/uploads/2024/05/boat.jpg" width="600" '
        f'height="400" alt=""></a>'),
    # Joomla 3: caption.js turns <img class="caption" title="..."> into a caption.
    "joomla caption.js": (
        "Joomla 3 media/system/js/caption.js (img.caption title)",
        f'<p><img class="caption" src="/images/boat.jpg" width="600" height="400" alt="" '
        f'title="{CAPTION}"></p>'),
    # Joomla 4 article intro / full image.
    "joomla 4 figure": (
        "Joomla 4 layouts/joomla/content/full_image.php",
        f'<figure class="left item-image">{IMG}'
        f'<figcaption class="caption">{CAPTION}</figcaption></figure>'),
}


def page(markup: str) -> str:
    """A whole page around one convention's markup: an article, prose before it."""
    return (f"<!doctype html><html lang=\"en\"><head><title>At the harbour</title></head><body>"
            f"<main><article><h1>At the harbour</h1>{PROSE}{markup}</article></main></body>"
            f"</html>")
