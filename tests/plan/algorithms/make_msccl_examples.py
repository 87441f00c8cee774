#!/usr/bin/env python3
"""Writes the MSCCL XML test algorithms of tests/plan/algorithms from their public descriptions.

Each algorithm is the chunk program of a public MSCCLang example (msccl-tools, examples/mscclang),
written here as a list of chunk moves and lowered to MSCCL's XML format the way the format defines it:
a move between ranks is a send step on the source rank and a receive step on the destination (r for a
copy, rrc for a reduce), a reduce on one rank is an re step; every step depends on the last step of its
rank that wrote the chunks it touches (and, before a write, on those that read them), through nop steps
where a step has more than one such dependency, as MSCCL's format allows one per step.

    python3 tests/plan/algorithms/make_msccl_examples.py tests/plan/algorithms
"""
import sys
from pathlib import Path


class Program:
    def __init__(self, name, ngpus, chunks, scratch):
        self.name, self.ngpus, self.chunks, self.scratch = name, ngpus, chunks, scratch
        self.tbs = [dict() for _ in range(ngpus)]  # rank -> {tb key: {"send", "recv", "steps"}}
        self.writer = [dict() for _ in range(ngpus)]  # rank -> {(buf, chunk): (tb, step)}
        self.readers = [dict() for _ in range(ngpus)]  # rank -> {(buf, chunk): [(tb, step)]}

    def _tb(self, rank, key, send=-1, recv=-1):
        tbs = self.tbs[rank]
        if key not in tbs:
            tbs[key] = {"id": len(tbs), "send": send, "recv": recv, "steps": []}
        tb = tbs[key]
        if send >= 0:
            assert tb["send"] in (-1, send)
            tb["send"] = send
        if recv >= 0:
            assert tb["recv"] in (-1, recv)
            tb["recv"] = recv
        return tb

    def _step(self, rank, tb, step, reads, writes):
        deps = set()
        for c in reads + writes:
            if c in self.writer[rank]:
                deps.add(self.writer[rank][c])
        for c in writes:
            deps.update(self.readers[rank].get(c, []))
        deps = sorted(d for d in deps if d[0] != tb["id"])
        for d in deps[:-1]:  # one dependency per step: the others on nops before it
            tb["steps"].append({"type": "nop", "dep": d})
        step["dep"] = deps[-1] if deps else (-1, -1)
        tb["steps"].append(step)
        me = (tb["id"], len(tb["steps"]) - 1)
        for c in reads:
            self.readers[rank].setdefault(c, []).append(me)
        for c in writes:
            self.writer[rank][c] = me
            self.readers[rank][c] = []

    def move(self, src, sbuf, sidx, dst, dbuf, didx, cnt=1, reduce=False, sendtb=None, recvtb=None):
        """dst's chunks [didx, +cnt) = (reduce: themselves op) src's chunks [sidx, +cnt)."""
        rs = [(sbuf, sidx + k) for k in range(cnt)]
        ws = [(dbuf, didx + k) for k in range(cnt)]
        if src == dst:
            tb = self._tb(src, ("tb", sendtb) if sendtb is not None else ("local",))
            step = {"type": "re" if reduce else "cpy", "src": (sbuf, sidx), "dst": (dbuf, didx), "cnt": cnt}
            self._step(src, tb, step, rs + (ws if reduce else []), ws)
            return
        stb = self._tb(src, ("tb", sendtb) if sendtb is not None else ("send", dst), send=dst)
        self._step(src, stb, {"type": "s", "src": (sbuf, sidx), "dst": (dbuf, didx), "cnt": cnt}, rs, [])
        rtb = self._tb(dst, ("tb", recvtb) if recvtb is not None else ("recv", src), recv=src)
        step = {"type": "rrc" if reduce else "r", "src": (dbuf, didx) if reduce else (sbuf, sidx), "dst": (dbuf, didx), "cnt": cnt}
        self._step(dst, rtb, step, ws if reduce else [], ws)

    def xml(self, source):
        out = [f"<!-- {source} -->",
               f'<algo name="{self.name}" proto="Simple" nchannels="1" nchunksperloop="{self.chunks}" ngpus="{self.ngpus}" '
               f'coll="allreduce" inplace="1" outofplace="0" minBytes="0" maxBytes="0">']
        for r in range(self.ngpus):
            depended = set()
            for tb in self.tbs[r].values():
                for st in tb["steps"]:
                    if st["dep"][0] >= 0:
                        depended.add(st["dep"])
            out.append(f'  <gpu id="{r}" i_chunks="{self.chunks}" o_chunks="0" s_chunks="{self.scratch}">')
            for tb in sorted(self.tbs[r].values(), key=lambda t: t["id"]):
                out.append(f'    <tb id="{tb["id"]}" send="{tb["send"]}" recv="{tb["recv"]}" chan="0">')
                for s, st in enumerate(tb["steps"]):
                    sb, so = st.get("src", ("i", 0))
                    db, do = st.get("dst", ("i", 0))
                    has = 1 if (tb["id"], s) in depended else 0
                    out.append(f'      <step s="{s}" type="{st["type"]}" srcbuf="{sb}" srcoff="{so}" dstbuf="{db}" dstoff="{do}" '
                               f'cnt="{st.get("cnt", 0)}" depid="{st["dep"][0]}" deps="{st["dep"][1]}" hasdep="{has}"/>')
                out.append("    </tb>")
            out.append("  </gpu>")
        out.append("</algo>")
        return "\n".join(out) + "\n"


def allpairs(size):
    """msccl-tools examples/mscclang/allreduce_a100_allpairs.py (1 instance): each rank sends block r2
    of its input to rank r2's scratch, reduces the blocks it received into its own block chunk by chunk
    (tb index % size), and sends its reduced block to every other rank."""
    p = Program("allreduce_pairs", size, size * size, size * (size - 1))
    next_slot = [0] * size
    slot = {}
    for r1 in range(size):
        for r2 in range(size):
            if r1 != r2:
                slot[(r1, r2)] = next_slot[r2]
                p.move(r1, "i", r2 * size, r2, "s", next_slot[r2], cnt=size, sendtb=r2, recvtb=r1)
                next_slot[r2] += size
    for r in range(size):
        for index in range(size * (size - 1)):
            p.move(r, "s", index, r, "i", r * size + index % size, reduce=True, sendtb=index % size)
    for r1 in range(size):
        for r2 in range(size):
            if r1 != r2:
                p.move(r1, "i", r1 * size, r2, "i", r1 * size, cnt=size, sendtb=r2, recvtb=r1)
    return p


def hierarchical(gpus_per_node, nodes):
    """msccl-tools examples/mscclang/hierarchical_allreduce.py (schedule auto): ring reduce-scatter in
    every node (one ring per chunk offset), ring reduce-scatter and allgather across nodes between the
    GPUs of the same local index, ring allgather in every node."""
    G, N = gpus_per_node, nodes
    p = Program("hierarchical_allreduce", G * N, G * N, 0)

    def reduce_scatter(size, rank_offset=0, rank_step=1, chunk_offset=0, chunk_stride=1):
        for ch in range(size):
            index = ch * chunk_stride + chunk_offset
            for step in range(size - 1):
                other = ((step + 1 + ch) % size) * rank_step + rank_offset
                mine = ((step + 2 + ch) % size) * rank_step + rank_offset
                p.move(other, "i", index, mine, "i", index, reduce=True)

    def all_gather(size, rank_offset=0, rank_step=1, chunk_offset=0, chunk_stride=1):
        for ch in range(size):
            index = ch * chunk_stride + chunk_offset
            for step in range(size - 1):
                src = ((step + ch) % size) * rank_step + rank_offset
                dst = ((step + 1 + ch) % size) * rank_step + rank_offset
                p.move(src, "i", index, dst, "i", index)

    for n in range(N):
        for offset in range(N):
            reduce_scatter(G, rank_offset=n * G, chunk_offset=offset, chunk_stride=N)
    for g in range(G):
        reduce_scatter(N, rank_offset=g, rank_step=G, chunk_offset=g * N)
    for g in range(G):
        all_gather(N, rank_offset=g, rank_step=G, chunk_offset=g * N)
    for n in range(N):
        for offset in range(N):
            all_gather(G, rank_offset=n * G, chunk_offset=offset, chunk_stride=N)
    return p


def main():
    out = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    (out / "msccl_allreduce_allpairs_8.xml").write_text(allpairs(8).xml(
        "msccl-tools examples/mscclang/allreduce_a100_allpairs.py 8 1 (8 GPUs, 1 instance), "
        "written by tests/plan/algorithms/make_msccl_examples.py"))
    (out / "msccl_allreduce_hierarchical_4x2.xml").write_text(hierarchical(4, 2).xml(
        "msccl-tools examples/mscclang/hierarchical_allreduce.py 4 2 1 (4 GPUs per node, 2 nodes, 1 instance, "
        "schedule auto), written by tests/plan/algorithms/make_msccl_examples.py"))


if __name__ == "__main__":
    main()
