"""Archives are measured before they are read, and a download has a total deadline.

Each bomb is extracted in a fresh interpreter that reports how much its peak RSS grew
(``VmHWM``): before the fix the same archives grew it by the size of what they declared.
"""

from __future__ import annotations

import gzip
import http.server
import io
import json
import os
import struct
import subprocess
import sys
import tarfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillsd.core import limits
from skillsd.installing.archive_fetch import ArchiveError, download, extract
from tests.install.helpers import skill_text

ROOT = Path(__file__).resolve().parents[2]
GIB = 1 << 30
MIB = 1 << 20
#: What a refused bomb may add to the peak RSS of the process extracting it.
GROWTH = 16 * MIB

_MEASURE = """
import json, sys, time
from skillsd.installing.archive_fetch import ArchiveError, extract

def peak():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024

before, start = peak(), time.monotonic()
try:
    extract(sys.argv[1], sys.argv[2])
    error = None
except ArchiveError as exc:
    error = str(exc)
print(json.dumps({"grew": peak() - before, "seconds": time.monotonic() - start, "error": error}))
"""


def extract_measured(archive: Path, tmp_path: Path) -> dict[str, object]:
    """Extract ``archive`` in a fresh interpreter: its error, peak RSS growth and time."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(archive), str(tmp_path / "out")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _header(kind: bytes, size: int, name: str = "././@LongLink") -> bytes:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    return info.tobuf(format=tarfile.USTAR_FORMAT)


@pytest.fixture(scope="module")
def filler() -> bytes:
    """64 MiB of ``a`` as one gzip member (64 KiB), to follow a header's member: a gzip
    stream may hold several."""
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as out:
        for _ in range(64):
            out.write(b"a" * MIB)
    return buffer.getvalue()


# -- tar ------------------------------------------------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize(
    ("kind", "words"),
    [
        (b"L", "long name"),
        (b"K", "long link name"),
        (b"x", "set of pax records"),
        (b"g", "set of global pax records"),
    ],
)
def test_a_tar_header_declaring_a_gigabyte_is_refused_before_it_is_read(
    tmp_path: Path, filler: bytes, kind: bytes, words: str
) -> None:
    # Truncated: 64 MiB follow where 1 GiB is declared (before, tarfile read all of it at once).
    bomb = tmp_path / "bomb.tar.gz"
    bomb.write_bytes(gzip.compress(_header(kind, GIB), mtime=0) + filler)
    assert bomb.stat().st_size < 200_000
    measured = extract_measured(bomb, tmp_path)
    assert measured["error"] == (
        f"the tar header at byte 0 declares a {words} of {GIB} bytes, more than 65536"
    )
    assert isinstance(measured["grew"], int) and measured["grew"] < GROWTH, measured
    assert isinstance(measured["seconds"], float) and measured["seconds"] < 1.0, measured


@pytest.mark.process
def test_a_sparse_map_is_refused_before_it_is_read(tmp_path: Path) -> None:
    # A GNU 1.0 sparse map is read number by number until it holds what it declares: before,
    # tarfile was still reading this one, its list still growing, after two minutes.
    info = tarfile.TarInfo("skill/SKILL.md")
    info.pax_headers = {"GNU.sparse.major": "1", "GNU.sparse.minor": "0"}
    info.size = 64 * MIB
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as out:
        out.write(info.tobuf(format=tarfile.PAX_FORMAT))
        out.write(b"100000000\n")
        for _ in range(64):
            out.write(b"1\n" * (MIB // 2))
    bomb = tmp_path / "sparse.tar.gz"
    bomb.write_bytes(buffer.getvalue())
    measured = extract_measured(bomb, tmp_path)
    assert measured["error"] == "the tar header at byte 0 resizes or sparsifies a member"
    assert isinstance(measured["grew"], int) and measured["grew"] < GROWTH, measured


@pytest.mark.process
def test_global_pax_records_are_bounded(tmp_path: Path) -> None:
    # tarfile copies the global records into every member: 6000 tiny records and 2000 members
    # grew the peak RSS by 416 MB before.
    records = b"".join(b"9 k%04d=\n" % i for i in range(6000))
    members = b"".join(_header(b"0", 0, f"s/f{i}") for i in range(2000))
    bomb = tmp_path / "global.tar.gz"
    body = _header(b"g", len(records), "pax_global_header") + records
    body += b"\0" * (-len(records) % 512) + members + b"\0" * 1024
    bomb.write_bytes(gzip.compress(body, mtime=0))
    measured = extract_measured(bomb, tmp_path)
    assert measured["error"] == "its global pax headers hold more than 32 records"
    assert isinstance(measured["grew"], int) and measured["grew"] < GROWTH, measured


def _global_tar(tmp_path: Path, records: int) -> Path:
    body = b"".join(b"9 k%04d=\n" % i for i in range(records))
    tar = _header(b"g", len(body), "pax_global_header") + body + b"\0" * (-len(body) % 512)
    data = skill_text("global").encode()
    tar += _header(b"0", len(data), "global/SKILL.md") + data + b"\0" * (-len(data) % 512)
    path = tmp_path / f"global-{records}.tar"
    path.write_bytes(tar + b"\0" * 1024)
    return path


def test_global_pax_records_are_counted_to_their_limit(tmp_path: Path) -> None:
    limit = limits.INSTALL_MAX_TAR_GLOBAL_RECORDS
    extract(str(_global_tar(tmp_path, limit)), str(tmp_path / "a"))
    with pytest.raises(ArchiveError, match=f"more than {limit} records"):
        extract(str(_global_tar(tmp_path, limit + 1)), str(tmp_path / "b"))


def _pax_tar(tmp_path: Path, record_bytes: int, headers: int = 1) -> Path:
    """A tar of one skill whose SKILL.md follows ``headers`` pax headers, the first holding one
    record of ``record_bytes`` bytes."""
    data = skill_text("paxed").encode()
    long = "c" * (record_bytes - len(str(record_bytes)) - len(" comment=\n"))
    body = b""
    for comment in [long] + ["c"] * (headers - 1):
        info = tarfile.TarInfo("paxed/SKILL.md")
        info.size = len(data)
        info.pax_headers = {"comment": comment}
        body += info.tobuf(format=tarfile.PAX_FORMAT)[:-512]  # the pax header alone
    body += _header(b"0", len(data), "paxed/SKILL.md") + data + b"\0" * (-len(data) % 512)
    path = tmp_path / f"pax-{record_bytes}-{headers}.tar"
    path.write_bytes(body + b"\0" * 1024)
    return path


def test_a_pax_header_of_exactly_64_kib_is_read(tmp_path: Path) -> None:
    limit = limits.INSTALL_MAX_TAR_HEADER_BYTES
    top = Path(extract(str(_pax_tar(tmp_path, limit)), str(tmp_path / "a")))
    assert (top / "SKILL.md").exists()
    with pytest.raises(ArchiveError, match=f"set of pax records of {limit + 1} bytes"):
        extract(str(_pax_tar(tmp_path, limit + 1)), str(tmp_path / "b"))


def test_too_many_extended_headers_in_a_row_are_refused(tmp_path: Path) -> None:
    chain = limits.INSTALL_MAX_TAR_HEADER_CHAIN
    extract(str(_pax_tar(tmp_path, 100, headers=chain)), str(tmp_path / "a"))
    with pytest.raises(ArchiveError, match=f"more than {chain} extended headers"):
        extract(str(_pax_tar(tmp_path, 100, headers=chain + 1)), str(tmp_path / "b"))


def _pax_member(size: int, name: str) -> bytes:
    record = b"%d comment=" % size
    record += b"c" * (size - len(record) - 1) + b"\n"
    return _header(b"x", size, "pax") + record + b"\0" * (-size % 512) + _header(b"0", 0, name)


def test_header_extensions_are_bounded_together(tmp_path: Path) -> None:
    # 64 members, each with 64 KiB of pax records: 4 MiB in all, then a member with 16 more.
    total = limits.INSTALL_MAX_TAR_HEADERS_BYTES
    each = limits.INSTALL_MAX_TAR_HEADER_BYTES
    tar = b"".join(_pax_member(each, f"s/f{i}") for i in range(total // each))
    (tmp_path / "full.tar").write_bytes(tar + b"\0" * 1024)
    extract(str(tmp_path / "full.tar"), str(tmp_path / "a"))
    (tmp_path / "over.tar").write_bytes(tar + _pax_member(16, "s/last") + b"\0" * 1024)
    with pytest.raises(ArchiveError, match=f"hold more than {total} bytes"):
        extract(str(tmp_path / "over.tar"), str(tmp_path / "b"))


def test_tar_members_are_counted_before_they_are_read(tmp_path: Path) -> None:
    members = b"".join(_header(b"0", 0, f"s/f{i}") for i in range(6))
    path = tmp_path / "many.tar"
    path.write_bytes(members + b"\0" * 1024)
    extract(str(path), str(tmp_path / "a"), max_entries=6)
    with pytest.raises(ArchiveError, match="more than 5 entries"):
        extract(str(path), str(tmp_path / "b"), max_entries=5)
    assert not (tmp_path / "b" / "s").exists()  # refused before a member was written
    declared = _header(b"0", GIB, "s/huge") + b"a" * 512
    (tmp_path / "huge.tar").write_bytes(declared)
    with pytest.raises(ArchiveError, match="expands to more than"):
        extract(str(tmp_path / "huge.tar"), str(tmp_path / "c"))


# -- zip ------------------------------------------------------------------------------------


def _zip_declaring(entries: int, *, records: int = 0, name: bytes = b"f") -> bytes:
    """A zip of one skill whose end records (zip64 form) declare ``entries`` entries, with
    ``records`` central directory records named ``name`` added after the real one."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("one/SKILL.md", skill_text("one"))
    data = buffer.getvalue()
    at = data.rindex(b"PK\x05\x06")
    cd_size, cd_offset = struct.unpack_from("<2L", data, at + 12)
    fields = [0] * 18
    fields[11] = len(name)
    extra = (struct.pack("<4s4B4HL2L5H2L", b"PK\x01\x02", *fields) + name) * records
    directory = data[cd_offset : cd_offset + cd_size] + extra
    zip64_at = cd_offset + len(directory)
    zip64 = struct.pack(
        "<4sQ2H2L4Q", b"PK\x06\x06", 44, 45, 45, 0, 0, entries, entries, len(directory), cd_offset
    )
    locator = struct.pack("<4sLQL", b"PK\x06\x07", 0, zip64_at, 1)
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    return data[:cd_offset] + directory + zip64 + locator + end


def test_a_zip_declaring_two_million_entries_is_refused_before_zipfile_reads_it(
    tmp_path: Path,
) -> None:
    honest = tmp_path / "honest.zip"
    honest.write_bytes(_zip_declaring(1))
    assert (Path(extract(str(honest), str(tmp_path / "a"))) / "SKILL.md").exists()
    bomb = tmp_path / "bomb.zip"
    bomb.write_bytes(_zip_declaring(2_000_000))
    with pytest.raises(ArchiveError, match="declares 2000000 entries, more than 20000"):
        extract(str(bomb), str(tmp_path / "b"))
    assert not (tmp_path / "b" / "one").exists()


@pytest.mark.process
@pytest.mark.parametrize("declared", [300_001, 1])
def test_a_zip_with_300k_directory_records_is_refused_before_they_are_read(
    tmp_path: Path, declared: int
) -> None:
    # 1: the end record lies, the records are counted anyway (zipfile reads them all).
    bomb = tmp_path / "records.zip"
    bomb.write_bytes(_zip_declaring(declared, records=300_000))
    measured = extract_measured(bomb, tmp_path)
    expected = (
        "its central directory holds more than 20000 entries"
        if declared == 1
        else "its central directory declares 300001 entries, more than 20000"
    )
    assert measured["error"] == expected
    assert isinstance(measured["grew"], int) and measured["grew"] < GROWTH, measured
    assert isinstance(measured["seconds"], float) and measured["seconds"] < 1.0, measured


def test_a_zip_directory_larger_than_its_entries_allow_is_refused(tmp_path: Path) -> None:
    # One real record of 58 bytes and one of 46 plus its name: 10 entries allow 10240 bytes.
    for name_bytes, words in ((10136, "not a readable archive"), (10137, "declares 10241 bytes")):
        wide = tmp_path / f"wide-{name_bytes}.zip"
        wide.write_bytes(_zip_declaring(2, records=1, name=b"n" * name_bytes))
        with pytest.raises(ArchiveError, match=words):
            extract(str(wide), str(tmp_path / str(name_bytes)), max_entries=10)
    bomb = tmp_path / "wide.zip"
    bomb.write_bytes(_zip_declaring(1, records=1000))
    with pytest.raises(ArchiveError, match="declares 47058 bytes, more than 10240"):
        extract(str(bomb), str(tmp_path / "a"), max_entries=10)


def test_a_zip_member_without_a_name_is_refused(tmp_path: Path) -> None:
    # zipfile's is_dir() fails on an empty name: it used to escape as an IndexError.
    path = tmp_path / "nameless.zip"
    path.write_bytes(_zip_declaring(2, records=1, name=b""))
    with pytest.raises(ArchiveError, match="a member has no name"):
        extract(str(path), str(tmp_path / "a"))


# -- archives that are not bombs still extract ---------------------------------------------------

LONG = "deep/" + "x" * 120 + "/SKILL.md"


@pytest.mark.parametrize("compression", ["", "gz", "bz2", "xz"])
@pytest.mark.parametrize("fmt", [tarfile.USTAR_FORMAT, tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_ordinary_tars_still_extract(tmp_path: Path, compression: str, fmt: int) -> None:
    path = tmp_path / "ok.tar"
    name = LONG if fmt != tarfile.USTAR_FORMAT else "deep/SKILL.md"
    write: Any = f"w:{compression}"  # typeshed types each mode as its own literal
    with tarfile.open(path, write, format=fmt) as archive:
        folder = tarfile.TarInfo("deep/scripts")
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)
        for member, data, mode in ((name, b"skill", 0o644), ("deep/scripts/run.sh", b"#!", 0o755)):
            info = tarfile.TarInfo(member)
            info.size, info.mode = len(data), mode
            archive.addfile(info, io.BytesIO(data))
    top = Path(extract(str(path), str(tmp_path / "out")))
    assert (top / name.removeprefix("deep/")).read_bytes() == b"skill"
    assert os.access(top / "scripts" / "run.sh", os.X_OK)


@pytest.mark.process
def test_a_git_archive_still_extracts(tmp_path: Path) -> None:
    from tests.install.helpers import make_origin, write_skill
    from tests.support.env import git_user_env

    env = git_user_env(tmp_path)
    origin = make_origin(tmp_path / "src", env)
    write_skill(origin.work / "skills" / "alpha", **{"notes/" + "n" * 150 + ".md": "long"})
    origin.commit("v1")
    archive = tmp_path / "repo.tar.gz"
    subprocess.run(
        ["git", "archive", "--format=tar.gz", "--prefix=repo-main/", "-o", str(archive), "HEAD"],
        cwd=origin.work,
        env=env,
        check=True,
    )
    top = Path(extract(str(archive), str(tmp_path / "out")))
    assert (top / "skills" / "alpha" / "notes" / ("n" * 150 + ".md")).read_text() == "long"


# -- download deadline ------------------------------------------------------------------------


class _Drip(http.server.BaseHTTPRequestHandler):
    """Sends one byte every 0.2 s: in its headers, or in a 1000-byte body."""

    in_headers = False
    stopped = threading.Event()

    def do_GET(self) -> None:
        try:
            if self.in_headers:
                self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                for _ in range(1000):
                    self.wfile.write(b"X")
                    self.wfile.flush()
                    time.sleep(0.2)
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            for _ in range(1000):
                self.wfile.write(b"a")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:
            type(self).stopped.set()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def dripping() -> Iterator[type[_Drip]]:
    handler = type("Drip", (_Drip,), {"stopped": threading.Event()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    handler.url = f"http://127.0.0.1:{server.server_address[1]}/skills.tar.gz"  # type: ignore[attr-defined]
    try:
        yield handler
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.xdist_group("serial")
@pytest.mark.parametrize("in_headers", [False, True])
def test_a_download_has_a_total_deadline(
    tmp_path: Path, dripping: type[_Drip], in_headers: bool
) -> None:
    dripping.in_headers = in_headers
    url: str = dripping.url  # type: ignore[attr-defined]
    start = time.monotonic()
    with pytest.raises(ArchiveError) as caught:
        download(url, str(tmp_path / "download"), timeout=5.0, deadline=1.0)
    elapsed = time.monotonic() - start
    assert str(caught.value) == f"{url}: not downloaded within the 1 s deadline"
    assert 0.9 < elapsed < 3.0
    # The abandoned transfer lets go of the connection at once, not at its next idle timeout.
    assert dripping.stopped.wait(2.0)
