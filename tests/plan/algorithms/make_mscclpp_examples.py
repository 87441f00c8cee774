#!/usr/bin/env python3
"""Writes the MSCCL++ JSON test plans of tests/plan/algorithms from their public descriptions, in MSCCL++'s
execution-plan format (gpus, threadblocks, ops put/signal/wait/reduce/nop over memory channels, remote
buffers). Each plan says in "reproduces" which public example it follows.

    python3 tests/plan/algorithms/make_mscclpp_examples.py tests/plan/algorithms
"""
import json
import sys
from pathlib import Path


def chunk(buf, index, size=1):
    return {"type": buf, "index": index, "size": size}


def plan(name, collective, inplace, source, gpus):
    return {"name": name, "collective": collective, "protocol": "Simple", "inplace": inplace, "reproduces": source,
            "gpus": gpus, "num_threads_per_block": 1024, "use_double_scratch_buffer": False, "buffer_alignment": 16,
            "min_message_size": 0, "max_message_size": 18446744073709551615}


def gpu(rank, peers, remotes, ops, inputs, outputs, scratch):
    """One GPU with one threadblock: a memory channel to every peer, the remote buffers it puts into."""
    return {"id": rank, "input_chunks": inputs, "output_chunks": outputs, "scratch_chunks": scratch,
            "threadblocks": [{"id": 0, "ops": ops,
                              "channels": [{"channel_type": "memory", "channel_ids": list(range(len(peers)))}],
                              "remote_buffer_refs": [{"access_channel_type": "memory", "remote_buffer_ids": list(range(len(remotes)))}]}],
            "channels": [{"type": "memory", "connected_to": peers}],
            "remote_buffers": [{"rank": q, "type": t, "access_channel_types": ["memory"]} for q, t in remotes]}


def allgather_2gpus():
    """microsoft/mscclpp test/execution-files/allgather_2gpus.json: in place; a barrier (signal, wait),
    each GPU puts its block of the output into the peer's output, signals, waits for the peer's."""
    gpus = []
    for r in range(2):
        q = 1 - r
        ops = [{"name": "signal", "channel_ids": [0], "channel_type": "memory"},
               {"name": "wait", "channel_ids": [0], "channel_type": "memory"},
               {"name": "nop"},
               {"name": "put", "src_buff": [chunk("o", r)], "dst_buff": [{"buffer_id": 0, "index": r, "size": 1}],
                "channel_ids": [0], "channel_type": "memory"},
               {"name": "nop"},
               {"name": "signal", "channel_ids": [0], "channel_type": "memory"},
               {"name": "wait", "channel_ids": [0], "channel_type": "memory"}]
        gpus.append(gpu(r, [q], [(q, "o")], ops, 1, 2, 0))
    return plan("allgather", "allgather", True, "microsoft/mscclpp test/execution-files/allgather_2gpus.json", gpus)


def allreduce_allpairs(size):
    """The all-pairs allreduce of msccl-tools examples/mscclang/allreduce_a100_allpairs_mscclpp.py, in
    place, one threadblock per GPU: every GPU puts block r2 of its input into GPU r2's scratch (one
    slot per sender) and signals; waits for every peer; reduces each chunk of its own block with the
    slots (a reduce with one src per slot); puts its reduced block into every peer's input; signals;
    waits for every peer's."""
    gpus = []
    for r in range(size):
        peers = [q for q in range(size) if q != r]
        slot = {q: (q if q < r else q - 1) * size for q in peers}  # where sender q's block lands at r
        ops = []
        for k, q in enumerate(peers):
            mine_at_q = (r if r < q else r - 1) * size
            ops.append({"name": "put", "src_buff": [chunk("i", q * size, size)],
                        "dst_buff": [{"buffer_id": k, "index": mine_at_q, "size": size}], "channel_ids": [k], "channel_type": "memory"})
        ops.append({"name": "signal", "channel_ids": list(range(len(peers))), "channel_type": "memory"})
        ops.append({"name": "wait", "channel_ids": list(range(len(peers))), "channel_type": "memory"})
        for j in range(size):
            ops.append({"name": "reduce", "src_buff": [chunk("i", r * size + j)] + [chunk("s", slot[q] + j) for q in peers],
                        "dst_buff": [chunk("i", r * size + j)]})
        for k, q in enumerate(peers):
            ops.append({"name": "put", "src_buff": [chunk("i", r * size, size)],
                        "dst_buff": [{"buffer_id": len(peers) + k, "index": r * size, "size": size}], "channel_ids": [k],
                        "channel_type": "memory"})
        ops.append({"name": "signal", "channel_ids": list(range(len(peers))), "channel_type": "memory"})
        ops.append({"name": "wait", "channel_ids": list(range(len(peers))), "channel_type": "memory"})
        remotes = [(q, "s") for q in peers] + [(q, "i") for q in peers]
        gpus.append(gpu(r, peers, remotes, ops, size * size, 0, size * (size - 1)))
    return plan("allreduce_pairs", "allreduce", True,
                "msccl-tools examples/mscclang/allreduce_a100_allpairs_mscclpp.py (its all-pairs allreduce, one threadblock per GPU)",
                gpus)


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    (out / "mscclpp_allgather_2gpus.json").write_text(json.dumps(allgather_2gpus(), indent=1) + "\n")
    (out / "mscclpp_allreduce_allpairs_4.json").write_text(json.dumps(allreduce_allpairs(4), indent=1) + "\n")


if __name__ == "__main__":
    main()
