"""Files of downloaded, not installed, Debian packages: the one reader of ``.deb`` files for the
tools that take training and evaluation pictures out of packages (``tools/relevance_data.py``'s
``deb:`` paths, ``tools/image_sources_wide.py``'s seventh-round sources).

Packages are read without installing them (KPhotoAlbum's twenty demo photos would pull some 220
KDE and Qt packages), from ``LAIT_DEB_DIR`` (default ``out/debs``, where the Makefile's
``DEB_PKGS`` are fetched by ``apt-get download`` at setup).

A .deb is an ``ar`` archive whose ``data.tar.*`` member holds the files.  It is read here in
Python rather than through ``dpkg-deb``, so that reading one needs no dpkg and no second copy of
the uncompressed tar: xz (Debian's default, and every .deb the tools read), gzip, bzip2 and an
uncompressed tar are read by ``tarfile``; zstd (Ubuntu's default) by ``zstandard`` when it is
installed.
"""
from __future__ import annotations

import glob
import io
import os
import tarfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_AR_MAGIC = b"!<arch>\n"
_AR_HEADER = 60  # name 16, mtime 12, uid 6, gid 6, mode 8, size 10, magic 2


def deb_dir() -> str:
    """The folder of downloaded .debs: ``LAIT_DEB_DIR``, else ``out/debs`` of this checkout."""
    return os.environ.get("LAIT_DEB_DIR") or os.path.join(ROOT, "out", "debs")


def find(package: str, directory: str | None = None) -> str:
    """The .deb of ``package`` in ``directory`` (default :func:`deb_dir`), the last by name
    when several versions were downloaded; "" when there is none."""
    found = sorted(glob.glob(os.path.join(directory or deb_dir(), f"{package}_*.deb")))
    return found[-1] if found else ""


def data_tar(deb: str) -> tarfile.TarFile:
    """The data archive (the package's files, named ``./usr/...``) of the .deb file ``deb``.

    A missing file raises FileNotFoundError naming it and where .debs come from; a file that
    is not a .deb, or whose data archive this module cannot read, raises ValueError."""
    if not os.path.isfile(deb):
        raise FileNotFoundError(
            f"{deb} does not exist: download the package with `apt-get download` into "
            f"{os.path.dirname(deb) or '.'} (`make setup` fetches the Makefile's DEB_PKGS into "
            "out/debs) or point LAIT_DEB_DIR at a folder that holds it")
    with open(deb, "rb") as f:
        if f.read(len(_AR_MAGIC)) != _AR_MAGIC:
            raise ValueError(f"{deb} is not a Debian package (no ar header)")
        while len(header := f.read(_AR_HEADER)) == _AR_HEADER:
            name = header[:16].decode("ascii", "replace").strip().rstrip("/")
            size = int(header[48:58])
            if name.startswith("data.tar"):
                body = f.read(size)
                if name.endswith(".zst"):
                    body = _unzstd(deb, body)
                # mode "r:*" reads gz, bz2, xz and plain tars; a truncated or unknown one fails
                try:
                    return tarfile.open(fileobj=io.BytesIO(body), mode="r:*")
                except tarfile.TarError as e:
                    raise ValueError(f"{deb}: its {name} cannot be read ({e})") from None
            f.seek(size + (size & 1), os.SEEK_CUR)  # members are aligned to even offsets
    raise ValueError(f"{deb} has no data.tar member")


def _unzstd(deb: str, body: bytes) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise ValueError(f"{deb}: its data.tar.zst needs the zstandard module "
                         "(pip install zstandard)") from None
    # the frame of a .deb's data member may not record its size: decompress as a stream
    return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body)).read()
