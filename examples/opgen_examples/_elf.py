"""Which shared libraries a compiled library asks the loader for (its ELF DT_NEEDED entries), read
from the file without loading it: a library built by a compiler that links libstdc++ statically
carries its own copy of the C++ runtime, and beside torch's the process crashes at the first C++
exception (an op's error message, or AOTInductor loading a package)."""

from __future__ import annotations

import struct
from pathlib import Path

_PT_LOAD, _PT_DYNAMIC = 1, 2
_DT_NULL, _DT_NEEDED, _DT_STRTAB, _DT_STRSZ = 0, 1, 5, 10
# The C++ runtimes a library shares with torch when it links them dynamically (GCC's, LLVM's).
_CXX_RUNTIMES = ("libstdc++.so", "libc++.so")


def needed_libraries(path: str | Path) -> list[str] | None:
    """The DT_NEEDED entries of a 64-bit little-endian ELF file (x86-64, aarch64), or None for any
    other file (nothing is then said about it)."""
    with open(path, "rb") as f:
        header = f.read(64)
        if len(header) < 64 or header[:4] != b"\x7fELF" or header[4] != 2 or header[5] != 1:
            return None
        (table_at,) = struct.unpack_from("<Q", header, 0x20)
        entry_size, entries = struct.unpack_from("<HH", header, 0x36)
        f.seek(table_at)
        table = f.read(entry_size * entries)
        loads, dynamic = [], None  # (address, file offset, size) of each loaded segment; the dynamic one's
        for i in range(entries):
            kind, _, offset, address, _, size, _, _ = struct.unpack_from("<IIQQQQQQ", table, i * entry_size)
            if kind == _PT_LOAD:
                loads.append((address, offset, size))
            elif kind == _PT_DYNAMIC:
                dynamic = (offset, size)
        if dynamic is None:
            return []  # statically linked: it needs nothing
        f.seek(dynamic[0])
        section = f.read(dynamic[1])
        names, strings_at, strings_size = [], None, None
        for at in range(0, len(section) - 15, 16):
            tag, value = struct.unpack_from("<qQ", section, at)
            if tag == _DT_NULL:
                break
            if tag == _DT_NEEDED:
                names.append(value)
            elif tag == _DT_STRTAB:
                strings_at = value
            elif tag == _DT_STRSZ:
                strings_size = value
        if strings_at is None or strings_size is None:
            return None
        # The string table's address is a virtual one: its file offset is in the segment holding it.
        offset = next((o + strings_at - a for a, o, s in loads if a <= strings_at < a + s), None)
        if offset is None:
            return None
        f.seek(offset)
        strings = f.read(strings_size)
    return [strings[n : strings.index(b"\0", n)].decode(errors="replace") for n in names]


def carries_own_cxx_runtime(path: str | Path) -> bool:
    """Whether the C++ library at `path` links no shared C++ runtime (libstdc++, libc++): a static copy
    of its own. False where the file says nothing (not an ELF file this reads)."""
    needed = needed_libraries(path)
    return needed is not None and not any(name.startswith(_CXX_RUNTIMES) for name in needed)


def own_cxx_runtime_message(path: str | Path, built_by: str, rebuild: str) -> str:
    """What to say of a library at `path` that carries its own C++ runtime: `built_by` made it, and
    `rebuild` says how to make it again."""
    return (
        f"{path} carries its own copy of the C++ runtime (it needs no libstdc++.so.6): {built_by} linked "
        "libstdc++ statically, as some wrapper compilers set in CXX do, and beside torch's copy it crashes "
        f"the process (as it loads, or at the first C++ exception). {rebuild} with the system compiler: "
        "CC=gcc CXX=g++"
    )
