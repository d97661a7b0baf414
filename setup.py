from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """The compiled fastText predictor (``filters/_fastlid.pyx``) is optional: where it cannot
    be built (no C compiler), the install goes on and the text step asks fastText's own
    binding (the same answers, slower; ``LanguageId.compiled`` and the bench say which)."""

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:  # compiler missing or failing: the Python fallback runs
            print(f"warning: {ext.name} not built ({e}); fastText's binding will answer")


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
    packages=find_packages(include=["pipeline*", "filters*", "scoring*", "model*", "tools*"]),
    include_package_data=True,
    package_data={"": ["*.txt", "*.json", "*.onnx", "*.md", "*.jpg", "*.png", "*.yaml", "*.npz", "*.properties"]},
    ext_modules=extensions(),
    cmdclass={"build_ext": OptionalBuildExt},
    entry_points={"console_scripts": ["lait = tools.cli:main"]},
)
