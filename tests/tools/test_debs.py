"""tools/debs.py: the one .deb reader of the tools (relevance_data's ``deb:`` paths and
image_sources_wide's seventh-round sources), in Python, for every data compression a .deb uses."""
import io
import os
import tarfile

import pytest

from tests.scoring.test_relevance_parts import _ar  # the .deb container of (name, bytes) members
from tools import debs

PHOTO = b"\xff\xd8\xff fake jpeg bytes"


def _data_tar(mode="w:xz"):
    tar = io.BytesIO()
    with tarfile.open(fileobj=tar, mode=mode) as t:
        for name, body in (("./usr/share/demo/a.jpg", PHOTO), ("./usr/share/demo/notes.txt", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(body)
            t.addfile(info, io.BytesIO(body))
    return tar.getvalue()


def _deb(path, data, member="data.tar.xz"):
    # an odd-sized member first: ar pads it to an even offset
    path.write_bytes(_ar([("debian-binary", b"2.0\n"), ("control.tar.xz", b"odd"), (member, data)]))
    return str(path)


@pytest.mark.parametrize("suffix,mode", [("xz", "w:xz"), ("gz", "w:gz"), ("bz2", "w:bz2"), ("", "w")])
def test_every_tarfile_compression_is_read(tmp_path, suffix, mode):
    member = "data.tar" + (f".{suffix}" if suffix else "")
    deb = _deb(tmp_path / "demo_1_all.deb", _data_tar(mode), member)
    with debs.data_tar(deb) as t:
        assert t.extractfile("./usr/share/demo/a.jpg").read() == PHOTO


def test_a_zstd_data_member_is_read(tmp_path):
    """Ubuntu's .debs compress their data with zstd, which tarfile does not read."""
    zstandard = pytest.importorskip("zstandard")
    data = zstandard.ZstdCompressor().compress(_data_tar("w"))
    deb = _deb(tmp_path / "demo_1_all.deb", data, "data.tar.zst")
    with debs.data_tar(deb) as t:
        assert t.extractfile("./usr/share/demo/a.jpg").read() == PHOTO
    streamed = io.BytesIO()  # a frame that does not record its size (a streaming compressor)
    with zstandard.ZstdCompressor().stream_writer(streamed, closefd=False) as w:
        w.write(_data_tar("w"))
    deb = _deb(tmp_path / "demo_2_all.deb", streamed.getvalue(), "data.tar.zst")
    with debs.data_tar(deb) as t:
        assert t.extractfile("./usr/share/demo/a.jpg").read() == PHOTO


def test_bad_debs_fail_with_a_message_that_names_them(tmp_path):
    missing = str(tmp_path / "gone_1_all.deb")
    with pytest.raises(FileNotFoundError, match="gone_1_all.deb does not exist.*LAIT_DEB_DIR"):
        debs.data_tar(missing)
    (tmp_path / "bad_1_all.deb").write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="bad_1_all.deb is not a Debian package"):
        debs.data_tar(str(tmp_path / "bad_1_all.deb"))
    nodata = tmp_path / "nodata_1_all.deb"
    nodata.write_bytes(_ar([("debian-binary", b"2.0\n"), ("control.tar.xz", b"odd")]))
    with pytest.raises(ValueError, match="has no data.tar member"):
        debs.data_tar(str(nodata))
    broken = _deb(tmp_path / "broken_1_all.deb", b"not xz at all")
    with pytest.raises(ValueError, match="data.tar.xz cannot be read"):
        debs.data_tar(broken)


def test_find_reads_lait_deb_dir_at_call_time(tmp_path, monkeypatch):
    _deb(tmp_path / "demo_1.0-1_all.deb", _data_tar())
    _deb(tmp_path / "demo_1.0-2_all.deb", _data_tar())
    monkeypatch.setenv("LAIT_DEB_DIR", str(tmp_path))
    assert debs.deb_dir() == str(tmp_path)
    assert debs.find("demo") == str(tmp_path / "demo_1.0-2_all.deb")  # the last by name
    assert debs.find("other") == ""
    assert debs.find("demo", str(tmp_path / "elsewhere")) == ""
    monkeypatch.delenv("LAIT_DEB_DIR")
    assert debs.deb_dir() == os.path.join(debs.ROOT, "out", "debs")


def test_both_callers_read_through_the_shared_reader(tmp_path, monkeypatch):
    """image_sources_wide reads a .deb without dpkg-deb (no PATH) into its cache, and says []
    for a package not downloaded; relevance_data reads a ``deb:`` path from the same file."""
    from tools import image_sources_wide as wide
    from tools import relevance_data as rd

    debdir = tmp_path / "debs"
    debdir.mkdir()
    _deb(debdir / "demo-pkg_1.0-1_all.deb", _data_tar())
    monkeypatch.setenv("LAIT_DEB_DIR", str(debdir))
    monkeypatch.setenv("LAIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PATH", "")
    assert wide.deb_names("demo-pkg", "usr/share/demo/") == ["usr/share/demo/a.jpg"]
    files = wide.deb_files("demo-pkg", ["usr/share/demo/a.jpg"])
    assert len(files) == 1 and open(files[0], "rb").read() == PHOTO
    assert wide.deb_files("not-downloaded", ["usr/share/demo/a.jpg"]) == []
    monkeypatch.setattr(rd, "DEB_DIR", str(debdir))
    rd._deb_files.cache_clear()
    try:
        assert rd.read_bytes("deb:demo-pkg:/usr/share/demo/a.jpg") == PHOTO
        with pytest.raises(FileNotFoundError, match="does not exist"):
            rd.read_bytes("deb:not-downloaded:/usr/share/demo/a.jpg")
    finally:
        rd._deb_files.cache_clear()
