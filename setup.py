from setuptools import find_packages, setup

setup(
    name="lait-builder",
    version="0.1.0",
    description="Build a LAIT-style image-text corpus from web crawls on Beam or Spark, "
                "and pre-train ImageBERT on it.",
    python_requires=">=3.10",
    packages=find_packages(include=["pipeline*", "filters*", "scoring*", "model*", "tools*"]),
    include_package_data=True,
    package_data={"": ["*.txt", "*.json", "*.onnx", "*.md", "*.jpg", "*.png", "*.yaml", "*.npz"]},
    entry_points={"console_scripts": ["lait = tools.cli:main"]},
)
