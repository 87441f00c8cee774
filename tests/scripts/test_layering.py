"""The rooms of the C++ tree depend only downwards (docs/design.md, "Rooms and who may depend on whom"):
every `#include "..."` of a project header in collectives/, sim/, bench/, trainer/ and tools/ names a
header of the same layer or a lower one. Above all, no executor, transport or backend includes the API
header collectives/communicator.h: they speak the call's vocabulary (collectives/call/), which sits
below them. A new room or an arrow back up fails here with the file, the header and both layers."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = (".h", ".cc", ".cu", ".cuh")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)

# Layer of each room, bottom first. Executors and transports sit in their backend's folder; the
# communicators there (`*_communicator.*`) are one layer up, above every executor they drive.
ROOM_LAYER = {
    "collectives/core": 0,
    "collectives/plan": 1,
    "collectives/conventions": 2,
    "collectives/call": 2,
    "sim": 2.5,  # reads plans; never calls an executor
    "collectives/host": 3,
    "collectives/cuda": 3,
    "collectives/proc": 4,  # the shared-memory layer (uses host's waits and LL lines)
    "collectives/nccl": 4,
    "collectives/mpi": 5,
    "collectives/gpu_proc": 6,
    "collectives/api": 8,  # collectives/communicator.{h,cc}: the API and the backend factory
    "bench": 9,
    "trainer": 9,
    "tools": 9,
}
COMMUNICATOR_LAYER = 7
COMMUNICATOR = re.compile(r"_communicator\.(h|cc)$")


def room_of(rel):
    parts = rel.split("/")
    if parts[0] == "collectives":
        return "collectives/api" if len(parts) == 2 else "collectives/" + parts[1]
    return parts[0]


def layer_of(rel):
    room = room_of(rel)
    if room not in ROOM_LAYER:
        return None
    if room.startswith("collectives/") and room != "collectives/api" and COMMUNICATOR.search(rel):
        return COMMUNICATOR_LAYER
    return ROOM_LAYER[room]


def project_files():
    for top in ("collectives", "sim", "bench", "trainer", "tools"):
        for path in sorted((ROOT / top).rglob("*")):
            if path.suffix in SOURCES and path.is_file():
                yield path.relative_to(ROOT).as_posix()


def arrows_up():
    bad = []
    for rel in project_files():
        own = layer_of(rel)
        assert own is not None, f"{rel}: its room is not in ROOM_LAYER (add it, and to docs/design.md)"
        for header in INCLUDE.findall((ROOT / rel).read_text(encoding="utf-8", errors="replace")):
            target = layer_of(header)
            if target is not None and target > own:
                bad.append(f"{rel} (layer {own}) includes {header} (layer {target})")
    return bad


def test_rooms_depend_only_downwards():
    assert not arrows_up(), "\n".join(arrows_up())


def test_no_backend_includes_the_api_header():
    offenders = [rel for rel in project_files()
                 if room_of(rel).startswith("collectives/") and room_of(rel) != "collectives/api"
                 and '"collectives/communicator.h"' in (ROOT / rel).read_text(encoding="utf-8", errors="replace")]
    assert not offenders, offenders


def test_the_check_sees_an_arrow_up():
    # The rule itself: an executor naming the API header, or the plan naming an executor, is up.
    assert layer_of("collectives/communicator.h") > layer_of("collectives/host/host_executor.h")
    assert layer_of("collectives/host/host_executor.h") > layer_of("collectives/plan/plan.h")
    assert layer_of("collectives/host/host_communicator.h") > layer_of("collectives/mpi/mpi_executor.h")
    assert layer_of("collectives/call/vocabulary.h") < layer_of("collectives/host/host_executor.h")
