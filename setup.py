import os
import re

from setuptools import Extension, find_packages, setup
from setuptools.command.bdist_wheel import bdist_wheel
from setuptools.command.build_ext import build_ext
from setuptools.command.sdist import sdist

HERE = os.path.dirname(os.path.abspath(__file__))

# requirements.txt lines that a worker does not need: tests, benchmarks, the build itself
# (Cython compiles filters/_fastlid.pyx, `build` makes the wheel) and the tools that rebuild
# the models (tools/build_image_models.py; the built .onnx files ship in the wheel).  onnx is a
# runtime dependency since the naturalness step's second opinion: filters/nsfw.py adds the pooled
# features as a second output of the int8 NSFW graph when a worker loads it.
# Everything else in requirements.txt is a dependency of the package: a new line there is
# declared by default (tests/test_packaging.py checks every imported distribution is).
NOT_RUNTIME = {"pytest", "import-linter", "lxml", "beautifulsoup4", "transformers",
               "scikit-image", "cython", "build"}


def _compatible(name: str, pin: str) -> str:
    """``numpy==2.4.6`` -> ``numpy>=2.4.6,<3``; ``protego==0.7.0`` -> ``protego>=0.7.0,<0.8``.

    Why ranges and not the pins: exact pins in a wheel's metadata make it uninstallable beside
    anything that pins another patch release, and still leave the dependencies' own
    dependencies free.  The reproducible install is the wheel plus ``-c constraints.txt``
    (every package, direct or pulled in, pinned: same bytes out on every worker), which
    docs/fetching.md uses everywhere.  The lower bound is the tested pin (older releases are
    unknown); the upper bound is the next major release (0.x: the next minor), where a
    library may change the API we call; calendar versions (regex 2026.11.15) get none."""
    major, minor = ([int(x) for x in re.findall(r"\d+", pin)[:2]] + [0])[:2]
    if major >= 1000:
        return f"{name}>={pin}"
    return f"{name}>={pin},<{major + 1 if major else f'0.{minor + 1}'}"


DATA_PACKAGES = ["filters.models", "filters.wordlists", "scoring.models", "scoring.data"]


def install_requires() -> list:
    """The runtime lines of requirements.txt (the one list of pins), as compatible ranges."""
    out = []
    with open(os.path.join(HERE, "requirements.txt"), encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            m = re.fullmatch(r"([A-Za-z0-9_.\-\[\]]+)==([^\s;]+)", line)
            if not m:
                raise SystemExit(f"requirements.txt: expected NAME==VERSION, got {line!r}")
            if m.group(1).lower() not in NOT_RUNTIME:
                out.append(_compatible(m.group(1), m.group(2)))
    return out


class OptionalBuildExt(build_ext):
    """The compiled fastText predictor (``filters/_fastlid.pyx``) is optional: where it cannot
    be built (no C compiler), the install goes on and the text step asks fastText's own
    binding (the same answers, slower; ``LanguageId.compiled`` and the bench say which)."""

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:  # compiler missing or failing: the Python fallback runs
            print(f"warning: {ext.name} not built ({e}); fastText's binding will answer")


# The image models a worker loads, generated (not in git) by `python -m tools.build_image_models`
# (`make setup`): a wheel or sdist without them would install fine and fail on the first image.
BUILT_MODELS = ["filters/models/efficientnet_lite0.onnx", "filters/models/efficientnet_lite0_int8.onnx",
                "filters/models/open_nsfw_int8.onnx"]


def _require_models(command):
    class WithModels(command):
        def run(self):
            missing = [p for p in BUILT_MODELS if not os.path.isfile(os.path.join(HERE, p))]
            if missing:
                raise SystemExit(f"{', '.join(missing)} missing: run `make setup` (or `python -m "
                                 "tools.build_image_models`) before building the package")
            super().run()
    return WithModels


def extensions() -> list:
    try:
        from Cython.Build import cythonize
    except ImportError:  # Cython is pinned in requirements.txt; without it: pure Python
        print("warning: Cython missing, filters._fastlid not built")
        return []
    # -ffp-contract=off: no fused multiply-add, so every float operation rounds as
    # fastText's own build does (the probabilities are compared bit for bit).
    ext = Extension("filters._fastlid", ["filters/_fastlid.pyx"],
                    extra_compile_args=["-ffp-contract=off"])
    return cythonize([ext], compiler_directives={"language_level": 3}, quiet=True)


setup(
    name="lait-builder",
    version="0.1.0",
    description="Build a LAIT-style image-text corpus from web crawls on Beam or Spark, "
                "and pre-train ImageBERT on it.",
    python_requires=">=3.10",
    # The data folders a worker reads (found from each module's own __file__, which holds in
    # site-packages too) are listed as packages of their own: setuptools ships the files of a
    # listed package only.  filters/models: the built image models (make setup; not in git)
    # and the naturalness head; scoring/models: the scorer and its label vectors.
    packages=find_packages(include=["pipeline*", "filters*", "scoring*", "model*", "tools*"])
    + DATA_PACKAGES,
    install_requires=install_requires(),
    package_data={"": ["*.txt", "*.json", "*.onnx", "*.md", "*.jpg", "*.png", "*.yaml", "*.npz",
                       "*.properties"],
                  **{p: ["*"] for p in DATA_PACKAGES}},
    # the extension's sources: the wheel carries the compiled module
    exclude_package_data={"filters": ["_fastlid.c", "_fastlid.pyx"]},
    ext_modules=extensions(),
    cmdclass={"build_ext": OptionalBuildExt, "bdist_wheel": _require_models(bdist_wheel),
              "sdist": _require_models(sdist)},
    entry_points={"console_scripts": ["lait = tools.cli:main"]},
)
