#!/usr/bin/env python3
"""List the GPU code embedded in object files, archives or executables (no cuobjdump needed).

For each input, extracts the .nv_fatbin section with objcopy and prints one line per fatbin entry:
its kind (sm = machine code, ptx = virtual code the driver compiles at load) and architecture.
Exit status 1 if --require ARCH (e.g. 90) is given and some file with GPU code lacks machine code
for it. Usage: fatbin_arch.py [--require 90] FILE...
"""
import os
import struct
import subprocess
import sys
import tempfile

FATBIN_MAGIC = 0xBA55ED50
KINDS = {1: "ptx", 2: "sm"}


def entries(blob):
    pos = 0
    while pos + 16 <= len(blob):
        magic, _version, header, size = struct.unpack_from("<IHHQ", blob, pos)
        if magic != FATBIN_MAGIC:
            pos += 8  # sections are padded; fatbins start 8-byte aligned
            continue
        e, end = pos + header, pos + header + size
        while e + 32 <= end:
            kind, _ver, ehdr, payload = struct.unpack_from("<HHIQ", blob, e)
            arch = struct.unpack_from("<I", blob, e + 28)[0]
            yield KINDS.get(kind, f"kind{kind}"), arch
            e += ehdr + payload
        pos = end


def fatbins(path):
    """The .nv_fatbin sections of a file (each member of an archive)."""
    with tempfile.TemporaryDirectory() as tmp:
        members = [path]
        if path.endswith(".a"):
            subprocess.run(["ar", "x", os.path.abspath(path)], cwd=tmp, check=True)
            members = [os.path.join(tmp, m) for m in sorted(os.listdir(tmp))]
        for m in members:
            out = os.path.join(tmp, "section.bin")
            r = subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", m, out],
                               capture_output=True)
            if r.returncode == 0 and os.path.exists(out) and os.path.getsize(out) > 0:
                with open(out, "rb") as f:
                    yield os.path.basename(m), f.read()
            if os.path.exists(out):
                os.remove(out)


def main(argv):
    require = None
    if len(argv) >= 2 and argv[0] == "--require":
        require, argv = int(argv[1]), argv[2:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    ok = True
    for path in argv:
        for member, blob in fatbins(path):
            found = sorted(set(entries(blob)))
            print(f"{path}:{member}: " + ", ".join(f"{k}_{a}" for k, a in found))
            if require is not None and ("sm", require) not in found:
                print(f"  missing sm_{require} machine code", file=sys.stderr)
                ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
