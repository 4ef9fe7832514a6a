"""A ``.eval`` log's zip archive, read member by member with a bound on what a member may inflate to.

inspect_ai writes a ``.eval`` log as a zip archive whose members are JSON documents, compressed
with zstandard (its own choice, method 93), deflate or stored. The archive's directory comes from
:mod:`zipfile`; the members are read and decompressed here, because zipfile cannot decompress
zstandard before Python 3.14, and because a member may declare one size and inflate to another
(a zip bomb: half a megabyte that inflates to a gigabyte). So a member is decompressed in
bounded pieces and refused as soon as it passes ``limit`` bytes, whatever its header says:

- deflate: :mod:`zlib`'s ``decompress(data, max_length)`` stops at the limit by itself;
- zstandard: a block inflates to at most 128 KiB and takes at least 4 bytes (an RLE block: a
  3-byte header and the byte repeated), so a piece of compressed bytes inflates to at most
  32,768 times its size (:data:`ZSTD_RATIO`). The compressed bytes are fed in pieces no larger
  than what is left of the bound divided by that ratio (at least :data:`ZSTD_PIECE`), so the
  bytes held never pass ``limit`` by more than 2 MiB; a member of a few kilobytes, as most are,
  is one piece;
- stored: the member's bytes are its contents.

Each member is then checked against its CRC, so a member that is not what its writer wrote is
named as corrupt.
"""

from __future__ import annotations

import mmap
import struct
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from mas_eval.errors import IngestError
from mas_eval.errors import option as option_text

__all__ = [
    "DEFLATED",
    "INSTALL",
    "MAX_MEMBER_BYTES",
    "STORED",
    "ZSTD",
    "ZSTD_PIECE",
    "ZSTD_RATIO",
    "Archive",
    "MemberTooLarge",
]

#: The zip compression methods of ``.eval`` members: none, deflate, zstandard (inspect_ai's own).
STORED, DEFLATED, ZSTD = 0, 8, 93
#: How to install what reading a zstandard-compressed ``.eval`` log needs.
INSTALL = "pip install 'mas_eval[inspect]'"
#: The default bound on one member's inflated size, in bytes: a sample's JSON as inspect_ai writes
#: it, transcript and events included, is kilobytes to tens of megabytes.
MAX_MEMBER_BYTES = 128 * 2**20
#: The most a zstandard block inflates to per byte it takes: 128 KiB from a 4-byte RLE block.
ZSTD_RATIO = 32768
#: The fewest compressed bytes of a zstandard member fed to the decompressor at a time: near the
#: bound, a piece may pass it by at most this times :data:`ZSTD_RATIO` (2 MiB).
ZSTD_PIECE = 64
#: A zip member's local header: its signature, fixed length, and where the lengths of the name
#: and the extra field that follow it are (the data starts after both).
_LOCAL_SIGNATURE, _LOCAL_SIZE, _LOCAL_LENGTHS = b"PK\x03\x04", 30, struct.Struct("<HH")


class MemberTooLarge(ValueError):  # noqa: N818 - it is the problem, said as the member's
    """A member inflates beyond the bound: the problem, said in one sentence naming the option that raises it."""

    def __init__(self, name: str, limit: int) -> None:
        mib = limit / 2**20
        raise_it = option_text("max_member_bytes", 2 * limit, cli=f"--max-member-mb {2 * mib:g}")
        super().__init__(
            f"member {name} inflates to more than {mib:g} MiB (the most a member is read to, max_member_bytes); "
            f"if the log is genuine, raise it ({raise_it})"
        )
        self.name, self.limit = name, limit


@dataclass(frozen=True)
class Member:
    """One member of the archive: its name, compression, sizes, CRC and where its local header is."""

    name: str
    method: int
    compressed: int
    size: int
    crc: int
    offset: int


class Archive:
    """A ``.eval`` log opened for reading, each member read whole by :meth:`read`, at most ``limit`` bytes inflated.

    A member written twice is read as its last copy, as inspect_ai reads it.

    Examples
    --------
    >>> import io, json, tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "log.eval"
    ...     with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
    ...         out.writestr("header.json", json.dumps({"version": 2}))
    ...     with Archive(path, limit=2**20) as archive:
    ...         sorted(archive.members), archive.read("header.json")
    (['header.json'], b'{"version": 2}')
    """

    def __init__(self, file: Path, *, limit: int) -> None:
        try:
            listing = zipfile.ZipFile(file)
        except zipfile.BadZipFile as exc:
            # zipfile's words for a missing end-of-central-directory record: a cut-off download or copy.
            if str(exc) != "File is not a zip file":
                raise
            msg = "EOCD not found: the zip archive is truncated, or the file is not one"
            raise ValueError(msg) from None
        with listing:
            self.members = {
                info.filename: Member(
                    info.filename, info.compress_type, info.compress_size, info.file_size, info.CRC, info.header_offset
                )
                for info in listing.infolist()
            }
        self.limit = limit
        self._raw: IO[bytes] = file.open("rb")
        # The file mapped, not read: a member is a slice of it (no two reads per member), and the
        # pages of a log larger than memory are the kernel's to drop.
        try:
            self._map: Any = mmap.mmap(self._raw.fileno(), 0, access=mmap.ACCESS_READ)
        except (ValueError, OSError):  # an empty file, or one that cannot be mapped: read it as a file
            self._map = None
        self._zstd: Any = None

    def __enter__(self) -> Archive:
        """Return the archive, open."""
        return self

    def __exit__(self, *_: object) -> None:
        """Close the file."""
        self.close()

    def close(self) -> None:
        """Close the file."""
        if self._map is not None:
            self._map.close()
        self._raw.close()

    def compressed(self, name: str) -> bytes:
        """Return the compressed bytes of member ``name``, as they lie in the file."""
        member = self.members[name]
        if self._map is not None:
            local = self._map[member.offset : member.offset + _LOCAL_SIZE]
        else:
            self._raw.seek(member.offset)
            local = self._raw.read(_LOCAL_SIZE)
        if local[:4] != _LOCAL_SIGNATURE:
            msg = f"member {name} has no local header where the archive's directory says"
            raise ValueError(msg)
        name_length, extra_length = _LOCAL_LENGTHS.unpack_from(local, _LOCAL_SIZE - _LOCAL_LENGTHS.size)
        start = member.offset + _LOCAL_SIZE + name_length + extra_length
        if self._map is not None:
            return self._map[start : start + member.compressed]
        self._raw.seek(start)
        return self._raw.read(member.compressed)

    def read(self, name: str) -> bytes:
        """Member ``name`` decompressed and checked against its CRC; :class:`MemberTooLarge` past the bound."""
        member = self.members[name]
        data = self.compressed(name)
        if member.method == ZSTD:
            data = self._unzstd(name, data)
        elif member.method == DEFLATED:
            inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            data = inflate.decompress(data, self.limit + 1)
            if len(data) > self.limit:
                raise MemberTooLarge(name, self.limit)
        elif member.method != STORED:
            msg = f"member {name} uses zip compression method {member.method}, not one inspect_ai writes"
            raise ValueError(msg)
        elif len(data) > self.limit:
            raise MemberTooLarge(name, self.limit)
        if zlib.crc32(data) != member.crc:
            msg = f"member {name} is corrupt (its CRC does not match)"
            raise ValueError(msg)
        return data

    def _unzstd(self, name: str, data: bytes) -> bytes:
        """zstandard-compressed bytes decompressed, frame after frame, in bounded pieces."""
        if self._zstd is None:
            self._zstd = _zstd()
        parts: list[bytes] = []
        held = 0
        at, end = 0, len(data)
        view = memoryview(data)
        frame = self._zstd.decompressobj()
        while at < end:
            # The most the next piece can inflate to is what is left of the bound: so it never passes it.
            piece = max(ZSTD_PIECE, (self.limit - held) // ZSTD_RATIO)
            out = frame.decompress(view[at : at + piece])
            at += piece
            if out:
                held += len(out)
                if held > self.limit:
                    raise MemberTooLarge(name, self.limit)
                parts.append(out)
            if frame.eof:
                # A member may hold several frames, one after another: what follows is the next one's.
                rest = frame.unused_data
                frame = self._zstd.decompressobj()
                at = min(at, end) - len(rest)
        return parts[0] if len(parts) == 1 else b"".join(parts)


def _zstd() -> Any:
    """Return a zstandard decompressor, imported on first use: only zstandard-compressed .eval logs need it."""
    try:
        import zstandard
    except ImportError:
        msg = f"reading inspect_ai .eval logs needs zstandard, which is not installed; install it with: {INSTALL}"
        raise IngestError(msg) from None
    return zstandard.ZstdDecompressor()
