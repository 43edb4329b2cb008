# SPDX-License-Identifier: MIT
"""DistributedDataParallel with NCCL on warpheap's pool and on PyTorch's
allocator: the losses must be the same, step by step (needs PyTorch and
two or more GPUs).

A worker (under torchrun) trains an MLP for --steps steps with DDP (1 MiB
gradient buckets, so several all-reduces a step), a batch size drawn at
every step, deterministic algorithms; every step it also exchanges a
tensor with the next rank by NCCL send/recv, drops the send buffer at
once and overwrites that memory (NCCL's C++ calls recordStream for it: on
warpheap that is the plug-in's record-stream hook), and counts the values
received wrong.  Rank 0 writes the losses averaged over the ranks:

  torchrun --standalone --nproc_per_node=2 python/tests/ddp_torch.py --allocator warpheap --out /tmp/wh.json
  torchrun --standalone --nproc_per_node=2 python/tests/ddp_torch.py --allocator torch --out /tmp/pt.json

Without torchrun it runs both and compares them (exit 0 when every loss is
bitwise the same and nothing was received wrong):

  python3 python/tests/ddp_torch.py [--nproc 2] [--steps 50]

The plug-in: WARPHEAP_PLUGIN, or the package's copy.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..")


def exchange(torch, dist, rank, world, step):
    """One send/recv round with the neighbours; the values received wrong."""
    peer, src = (rank + 1) % world, (rank - 1) % world
    n = (1 << 18) + (step % 4) * 1000
    send = torch.full((n,), float(rank * 1000 + step), device="cuda")
    recv = torch.empty(n, device="cuda")
    works = dist.batch_isend_irecv([dist.P2POp(dist.isend, send, peer), dist.P2POp(dist.irecv, recv, src)])
    del send  # its memory, asked for again at once and overwritten on this stream
    torch.empty(n, device="cuda").fill_(-1.0)
    for w in works:
        w.wait()
    return int((recv != float(src * 1000 + step)).sum().item())


def worker(args):
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    sys.path.insert(0, PACKAGE)
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch.nn.parallel import DistributedDataParallel as DDP

    if args.allocator == "warpheap":
        import warpheap.torch
        warpheap.torch.enable()
    local = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.use_deterministic_algorithms(True, warn_only=True)
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(nn.Linear(256, 1024), nn.GELU(), nn.Linear(1024, 1024), nn.GELU(),
                          nn.Linear(1024, 1024), nn.GELU(), nn.Linear(1024, 10)).cuda()
    ddp = DDP(model, device_ids=[local], bucket_cap_mb=1)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-3)
    gen = torch.Generator().manual_seed(100 + rank)
    losses, wrong = [], 0
    for step in range(args.steps):
        b = int(torch.randint(32, 513, (1,), generator=gen))
        x = torch.randn(b, 256, generator=gen).cuda()
        y = torch.randint(0, 10, (b,), generator=gen).cuda()
        loss = F.cross_entropy(ddp(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        mean = loss.detach().clone()
        dist.all_reduce(mean)
        losses.append(mean.item() / world)
        wrong += exchange(torch, dist, rank, world, step)
        if rank == 0 and (step + 1) % 10 == 0:
            print(f"[{args.allocator}] step {step + 1}/{args.steps}: loss {losses[-1]:.6f}", flush=True)
    total_wrong = torch.tensor([wrong], device="cuda")
    dist.all_reduce(total_wrong)
    if args.allocator == "warpheap":
        s = warpheap.torch.memory_stats()
        extra = {"hooked": warpheap.torch.record_stream_hooked(), "allocs": s["allocation.all.allocated"],
                 "reserved_peak": s["reserved_bytes.all.peak"]}
    else:
        extra = {"reserved_peak": torch.cuda.max_memory_reserved()}
    if rank == 0 and args.out:
        with open(args.out, "w") as f:
            json.dump({"allocator": args.allocator, "world": world, "losses": losses,
                       "wrong_received": int(total_wrong.item()), **extra}, f)
    dist.barrier()
    dist.destroy_process_group()


def launch(allocator, nproc, steps, out):
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
           os.path.abspath(__file__), "--allocator", allocator, "--steps", str(steps), "--out", out]
    print("$ " + " ".join(cmd), flush=True)
    return subprocess.run(cmd, timeout=600).returncode


def compare(nproc, steps):
    """Both runs and the check; 0 when they agree."""
    with tempfile.TemporaryDirectory() as tmp:
        res = {}
        for a in ("torch", "warpheap"):
            out = os.path.join(tmp, a + ".json")
            rc = launch(a, nproc, steps, out)
            if rc != 0 or not os.path.exists(out):
                print(f"ddp_torch: FAILED: the {a} run exited {rc}")
                return 1
            with open(out) as f:
                res[a] = json.load(f)
    pt, wh = res["torch"], res["warpheap"]
    diff = max(abs(a - b) for a, b in zip(pt["losses"], wh["losses"]))
    same = pt["losses"] == wh["losses"]
    print(f"{steps} steps on {wh['world']} ranks: final loss torch {pt['losses'][-1]:.6f}, "
          f"warpheap {wh['losses'][-1]:.6f}; losses {'bitwise identical' if same else f'differ by up to {diff:.3g}'}")
    print(f"values received wrong by send/recv: torch {pt['wrong_received']}, warpheap {wh['wrong_received']}; "
          f"record-stream hook set: {wh['hooked']}; warpheap allocations {wh['allocs']}")
    ok = same and wh["wrong_received"] == 0 and pt["wrong_received"] == 0 and wh["hooked"]
    print("ddp_torch:", "passed" if ok else "FAILED")
    return 0 if ok else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allocator", choices=("torch", "warpheap"))
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    if "LOCAL_RANK" in os.environ:
        if not args.allocator:
            ap.error("under torchrun: --allocator torch|warpheap")
        worker(args)
        return 0
    return compare(args.nproc, args.steps)


if __name__ == "__main__":
    sys.exit(main())
