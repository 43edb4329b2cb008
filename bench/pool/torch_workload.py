#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""PyTorch workload on four CUDA allocators: a small transformer language
model (4 pre-norm layers, d_model 512, 8 heads, vocabulary 8192), trained
with AdamW under bf16 autocast on sequences whose length is drawn from
64..1024 at every step (about 16k tokens a step), then run for inference
with a random batch (1..64) and length (16..1024) at every step.

Each allocator runs in its own process, same seed, same data:
  native            PyTorch's caching allocator
  expandable        the same with PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
  cudaMallocAsync   PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
  warpheap          warpheap.torch.enable() (the plug-in: WARPHEAP_PLUGIN or the package's copy)
  warpheap-loose    the same with WARPHEAP_CONF=footprint:loose,vmm_slack_pm:100: growth that never
                    waits for its stream, at the C library's budget (the plug-in's policy before)
REPS times each, in turns (a different allocator first in each round, so
that a slow spell of the machine does not fall on one allocator), and
reports the median steps/s of each phase with the lowest and highest, the
allocator's own peak reserved bytes,
and the device's peak used memory (torch.cuda.mem_get_info, what nvidia-smi
shows: the same measure for every allocator), sampled after the forward,
after the backward and after each step, less what was used before the
model (the CUDA context).  The losses of every step and the inference
outputs must match the native run's (deterministic algorithms, fixed cuBLAS
workspace): the check says bitwise, or the largest difference.  It also
prints warpheap.torch.memory_stats() next to torch.cuda.memory_stats() of
the native run, key by key.

  python3 bench/pool/torch_workload.py --out DIR [--reps N] [--train-steps N] [--infer-steps N] [--only NAME,...]
  python3 bench/pool/torch_workload.py --trace FILE [--train-steps N] [--infer-steps N]

Writes DIR/torch_workload.csv, torch_workload.md, torch_stats.md and
torch_workload.json; exits 1 when a run fails or a check does not match.
--trace instead runs the workload once on the native allocator with
PyTorch's memory history on and writes its allocations and frees to FILE,
one a line ("a ID BYTES STREAM", "f ID STREAM"; BYTES as PyTorch rounds
them, to 512), which wh_pool_replay --trace replays on the pool's CPU
backend.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "..", "..", "python")
ALLOCATORS = {
    "native": {},
    "expandable": {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"},
    "cudaMallocAsync": {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"},
    "warpheap": {},
    # the plug-in before growth waited for its stream: the library's slack, never waiting
    "warpheap-loose": {"WARPHEAP_CONF": "footprint:loose,vmm_slack_pm:100"},
}
VOCAB, D_MODEL, HEADS, LAYERS, FF, MAX_LEN = 8192, 512, 8, 4, 2048, 1024
TOKENS_PER_STEP = 16384
WARMUP = 10  # steps of each phase left out of steps/s (first kernels, cuBLAS handles, first growth)


# ---- the child: one allocator ------------------------------------------------------------------------------

def build_model(torch):
    nn, F = torch.nn, torch.nn.functional

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(D_MODEL), nn.LayerNorm(D_MODEL)
            self.qkv, self.proj = nn.Linear(D_MODEL, 3 * D_MODEL), nn.Linear(D_MODEL, D_MODEL)
            self.ff1, self.ff2 = nn.Linear(D_MODEL, FF), nn.Linear(FF, D_MODEL)

        def forward(self, x, mask):
            b, n, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).view(b, n, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // HEADS)) + mask[:n, :n]
            y = (att.softmax(-1) @ v).transpose(1, 2).reshape(b, n, d)
            x = x + self.proj(y)
            return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(VOCAB, D_MODEL)
            self.pos = nn.Parameter(torch.randn(MAX_LEN, D_MODEL) * 0.02)
            self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))
            self.ln = nn.LayerNorm(D_MODEL)
            self.head = nn.Linear(D_MODEL, VOCAB, bias=False)
            self.register_buffer("mask", torch.full((MAX_LEN, MAX_LEN), float("-inf")).triu(1), persistent=False)

        def forward(self, tokens):
            x = self.emb(tokens) + self.pos[: tokens.shape[1]]
            for blk in self.blocks:
                x = blk(x, self.mask)
            return self.head(self.ln(x))

    return LM()


def batch(torch, gen, b, n):
    """Learnable sequences: a random start and stride each, next token = previous + stride."""
    start = torch.randint(0, VOCAB, (b, 1), generator=gen)
    stride = torch.randint(1, 17, (b, 1), generator=gen)
    return (start + stride * torch.arange(n + 1)) % VOCAB


class Used:
    """The device's peak used memory (total - free), sampled."""

    def __init__(self, torch):
        self.torch = torch
        free, self.total = torch.cuda.mem_get_info()
        self.base = self.total - free
        self.peak = self.base

    def sample(self):
        free, _ = self.torch.cuda.mem_get_info()
        self.peak = max(self.peak, self.total - free)


def step_seconds(times, first):
    """Each step's wall time from the end of the one before, from step `first` on
    (every step ends on a value read back, so a step's GPU work is in it)."""
    return [b - a for a, b in zip(times[first - 1:], times[first:])]


def train(torch, model, used, steps, gen, log):
    F = torch.nn.functional
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
    losses, t0, times = [], None, []
    for step in range(steps):
        if step == WARMUP:
            torch.cuda.synchronize()
            t0 = time.perf_counter()
        n = int(torch.randint(64, MAX_LEN + 1, (1,), generator=gen))
        seq = batch(torch, gen, max(1, TOKENS_PER_STEP // n), n).cuda()
        with torch.autocast("cuda", dtype=torch.bfloat16):
            logits = model(seq[:, :-1])
        loss = F.cross_entropy(logits.float().view(-1, VOCAB), seq[:, 1:].reshape(-1))
        used.sample()
        loss.backward()
        used.sample()
        opt.step()
        opt.zero_grad(set_to_none=True)
        losses.append(loss.item())
        used.sample()
        times.append(time.perf_counter())
        if (step + 1) % 50 == 0 or step + 1 == steps:
            log(f"train step {step + 1}/{steps}: length {n}, loss {losses[-1]:.4f}")
    torch.cuda.synchronize()
    return losses, (steps - WARMUP) / (time.perf_counter() - t0), step_seconds(times, WARMUP)


def infer(torch, model, used, steps, gen, log):
    outs, t0, times = [], None, []
    with torch.inference_mode():
        for step in range(steps):
            if step == WARMUP:
                torch.cuda.synchronize()
                t0 = time.perf_counter()
            b = int(torch.randint(1, 65, (1,), generator=gen))
            n = int(torch.randint(16, MAX_LEN + 1, (1,), generator=gen))
            seq = batch(torch, gen, b, n - 1).cuda()
            with torch.autocast("cuda", dtype=torch.bfloat16):
                logits = model(seq)
            outs.append(logits[:, -1].float().argmax(-1).sum().item() + logits.float().mean().item())
            used.sample()
            times.append(time.perf_counter())
            if (step + 1) % 50 == 0 or step + 1 == steps:
                log(f"infer step {step + 1}/{steps}: batch {b}, length {n}")
    torch.cuda.synchronize()
    return outs, (steps - WARMUP) / (time.perf_counter() - t0), step_seconds(times, WARMUP)


TRACE_ENTRIES = 4_000_000  # the memory history's bound: a trace that reaches it was cut


def write_trace(torch, path):
    """The memory history's allocations and frees (free_requested: when the
    tensor dies, as a pluggable allocator sees it) as a plain trace; an
    address freed and taken again gets a new ID."""
    events = torch.cuda.memory._snapshot()["device_traces"][torch.cuda.current_device()]
    ids, streams, next_id, n = {}, {}, 0, 0
    with open(path, "w") as f:
        for e in events:
            if e["action"] == "alloc":
                ids[e["addr"]], next_id = next_id, next_id + 1
                s = streams.setdefault(e["stream"], len(streams))
                f.write(f"a {ids[e['addr']]} {e['size']} {s}\n")
            elif e["action"] == "free_requested" and e["addr"] in ids:
                f.write(f"f {ids.pop(e['addr'])} {streams.setdefault(e['stream'], len(streams))}\n")
            else:
                continue
            n += 1
    if n == 0 or len(events) >= TRACE_ENTRIES:
        raise SystemExit(f"trace: {len(events)} events recorded, {n} written: the history is empty or was cut")
    return n



def child(name, train_steps, infer_steps, trace=None):
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")  # deterministic cuBLAS, before torch starts CUDA
    sys.path.insert(0, PACKAGE)
    import torch

    def log(msg):
        print(f"[{name}] {msg}", flush=True)

    on_warpheap = name.startswith("warpheap")
    if on_warpheap:
        import warpheap.torch
        warpheap.torch.enable()
    if trace:  # no stacks: only the events
        torch.cuda.memory._record_memory_history(context=None, stacks="python", max_entries=TRACE_ENTRIES)
    torch.use_deterministic_algorithms(True, warn_only=True)
    if hasattr(torch.utils, "deterministic"):  # no NaN fill of every new tensor: it would add work to each allocation
        torch.utils.deterministic.fill_uninitialized_memory = False
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(1)
    used = Used(torch)
    model = build_model(torch).cuda()
    losses, train_rate, train_times = train(torch, model, used, train_steps, gen, log)
    outs, infer_rate, infer_times = infer(torch, model, used, infer_steps, gen, log)
    if trace:
        log(f"trace: {write_trace(torch, trace)} events in {trace}")
        return
    if on_warpheap:
        stats = warpheap.torch.memory_stats()
        reserved_peak = warpheap.torch.max_memory_reserved()
    else:
        stats = {k: v for k, v in torch.cuda.memory_stats().items() if isinstance(v, (int, float))}
        reserved_peak = torch.cuda.max_memory_reserved()
    conf = os.environ.get("WARPHEAP_CONF" if on_warpheap else "PYTORCH_CUDA_ALLOC_CONF", "")
    res = {"allocator": name, "conf": conf,
           "backend": torch.cuda.get_allocator_backend() if not on_warpheap else "pluggable",
           "gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "train_steps": train_steps, "train_steps_per_s": train_rate, "losses": losses,
           "infer_steps": infer_steps, "infer_steps_per_s": infer_rate, "infer_outputs": outs,
           "train_step_s": train_times, "infer_step_s": infer_times,
           "reserved_peak": reserved_peak, "used_base": used.base, "used_peak": used.peak, "stats": stats}
    if on_warpheap:
        res["record_stream_hooked"] = warpheap.torch.record_stream_hooked()
    print("RESULT " + json.dumps(res), flush=True)


# ---- the parent: runs, checks, tables ----------------------------------------------------------------------

def run(name, args):
    env = dict(os.environ, **ALLOCATORS[name])
    cmd = [sys.executable, os.path.abspath(__file__), "--child", name, "--train-steps", str(args.train_steps),
           "--infer-steps", str(args.infer_steps)]
    t0 = time.time()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    result, tail = None, []
    try:
        for line in p.stdout:
            if line.startswith("RESULT "):
                result = json.loads(line[7:])
            else:
                tail = (tail + [line.rstrip()])[-30:]
                if line.startswith("["):
                    print(line.rstrip(), flush=True)
        p.wait(timeout=args.timeout)
    except subprocess.TimeoutExpired:
        p.kill()
    if result is None:
        print(f"[{name}] FAILED (exit {p.returncode}):\n  " + "\n  ".join(tail), flush=True)
        return None
    result["wall_s"] = time.time() - t0
    return result


def compare(ref, res, key):
    """'bitwise', or the largest relative difference of the two lists."""
    a, b = ref[key], res[key]
    if a == b:
        return "bitwise", 0.0
    if len(a) != len(b):
        return f"{len(b)} values, not {len(a)}", math.inf
    d = max(abs(x - y) / max(1.0, abs(x)) for x, y in zip(a, b))
    return f"max rel diff {d:.2e}", d


MIB = 1 << 20


def combine(runs):
    """One allocator's runs as one result: the first run's fields, the
    median steps/s of each phase (and every run's in *_runs), the largest
    peaks, and every run kept for the checks."""
    r = dict(runs[0])
    for key in ("train_steps_per_s", "infer_steps_per_s"):
        r[key + "_runs"] = [x[key] for x in runs]
        r[key] = statistics.median(r[key + "_runs"])
    worst = max(runs, key=lambda x: x["used_peak"] - x["used_base"])
    r.update(used_peak=worst["used_peak"], used_base=worst["used_base"],
             reserved_peak=max(x["reserved_peak"] for x in runs), wall_s=sum(x["wall_s"] for x in runs), runs=runs)
    return r


def check_runs(ref, r, key):
    """compare() of every run of r against the reference's first: the worst."""
    return max((compare(ref, x, key) for x in r["runs"]), key=lambda c: c[1])


def rows(results):
    ref = results.get("native")
    out = []
    for name, r in results.items():
        check, worst = ("reference", 0.0) if not ref else check_runs(ref, r, "losses")
        icheck, iworst = ("reference", 0.0) if not ref else check_runs(ref, r, "infer_outputs")
        if name == "native":  # its own runs against its first: the workload is deterministic
            check, icheck = ("reference" if worst == 0 else check), ("reference" if iworst == 0 else icheck)
        tr, ir = r["train_steps_per_s_runs"], r["infer_steps_per_s_runs"]
        out.append({"allocator": name, "conf": r["conf"] or "-", "runs": len(tr),
                    "train_steps_per_s": r["train_steps_per_s"], "train_min": min(tr), "train_max": max(tr),
                    "train_tokens_per_s": r["train_steps_per_s"] * TOKENS_PER_STEP,
                    "infer_steps_per_s": r["infer_steps_per_s"], "infer_min": min(ir), "infer_max": max(ir),
                    "reserved_peak_mib": r["reserved_peak"] / MIB,
                    "used_peak_mib": (r["used_peak"] - r["used_base"]) / MIB, "used_peak_device_mib": r["used_peak"] / MIB,
                    "final_loss": r["losses"][-1], "loss_check": check, "infer_check": icheck,
                    "ok": max(worst, iworst) <= 1e-3, "wall_s": r["wall_s"]})
    return out


def write_tables(out_dir, table, results, args):
    os.makedirs(out_dir, exist_ok=True)
    cols = list(table[0].keys())
    with open(os.path.join(out_dir, "torch_workload.csv"), "w") as f:
        f.write(",".join(cols) + "\n")
        for r in table:
            f.write(",".join(f"{r[c]:.4g}" if isinstance(r[c], float) else str(r[c]) for c in cols) + "\n")
    any_r = next(iter(results.values()))
    md = [f"# PyTorch workload: transformer LM, {LAYERS} layers, d_model {D_MODEL}, vocabulary {VOCAB}", "",
          f"{any_r['gpu']}, PyTorch {any_r['torch']}; {args.train_steps} training steps (length 64..1024, "
          f"~{TOKENS_PER_STEP} tokens each), {args.infer_steps} inference steps (batch 1..64, length 16..1024); "
          f"steps/s without the first {WARMUP} of each phase, the median of {args.reps} run(s) of each "
          "allocator taken in turns (lowest and highest in brackets).  Peak used: the device's used memory "
          "(mem_get_info) less what the CUDA context held before the model, the largest of the runs.", "",
          "| allocator | conf | train steps/s | train tokens/s | infer steps/s | own peak reserved MiB | "
          "peak used MiB | losses vs native | inference vs native |",
          "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |"]
    for r in table:
        md.append(f"| {r['allocator']} | {r['conf']} | {r['train_steps_per_s']:.2f} "
                  f"({r['train_min']:.2f}-{r['train_max']:.2f}) | {r['train_tokens_per_s']:.0f} | "
                  f"{r['infer_steps_per_s']:.2f} ({r['infer_min']:.2f}-{r['infer_max']:.2f}) | "
                  f"{r['reserved_peak_mib']:.0f} | {r['used_peak_mib']:.0f} | {r['loss_check']} | {r['infer_check']} |")
    with open(os.path.join(out_dir, "torch_workload.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out_dir, "torch_workload.json"), "w") as f:
        json.dump(results, f)
    return "\n".join(md)


def stats_table(results):
    """warpheap.torch.memory_stats() beside torch.cuda.memory_stats() of the native run."""
    if "native" not in results or "warpheap" not in results:
        return None
    nat, wh = results["native"]["stats"], results["warpheap"]["stats"]  # the first run's
    keys = [k for k in wh if not k.startswith("warpheap.")] + [k for k in wh if k.startswith("warpheap.")]

    def fmt(k, v):
        if v is None:
            return "-"
        in_bytes = "bytes" in k or k in ("warpheap.cached", "warpheap.largest_free")
        return f"{v / MIB:.1f} MiB" if in_bytes and v >= MIB else str(v)

    w = max(len(k) for k in keys)
    lines = ["# memory_stats() after the same workload", "",
             f"| {'key'.ljust(w)} | native (torch.cuda) | warpheap (warpheap.torch) |", f"| {'-' * w} | ---: | ---: |"]
    lines += [f"| {k.ljust(w)} | {fmt(k, nat.get(k)):>19} | {fmt(k, wh[k]):>25} |" for k in keys]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="out/pool/torch")
    ap.add_argument("--train-steps", type=int, default=200)
    ap.add_argument("--infer-steps", type=int, default=200)
    ap.add_argument("--only", default="", help="comma-separated allocators (default: all four)")
    ap.add_argument("--reps", type=int, default=3, help="runs of each allocator, in turns (median reported)")
    ap.add_argument("--timeout", type=int, default=240, help="seconds for each allocator's run")
    ap.add_argument("--trace", help="instead, write the native run's allocation trace to this file")
    ap.add_argument("--child")
    args = ap.parse_args()
    if args.train_steps <= WARMUP or args.infer_steps <= WARMUP:
        ap.error(f"--train-steps and --infer-steps must be above {WARMUP}")
    if args.reps < 1:
        ap.error("--reps must be at least 1")
    if args.child or args.trace:
        child(args.child or "native", args.train_steps, args.infer_steps, args.trace)
        return 0
    names = [n for n in (args.only.split(",") if args.only else ALLOCATORS) if n]
    unknown = [n for n in names if n not in ALLOCATORS]
    if unknown:
        ap.error(f"unknown allocator {unknown} (known: {', '.join(ALLOCATORS)})")
    if any(n.startswith("warpheap") for n in names):
        sys.path.insert(0, PACKAGE)
        from warpheap import _plugin
        try:
            _plugin.plugin_path()
        except _plugin.PluginError as e:
            print(f"[warpheap] skipped: {e}")
            names = [n for n in names if not n.startswith("warpheap")]
    runs, failed = {name: [] for name in names}, []
    for rep in range(args.reps):
        for name in names[rep % len(names):] + names[:rep % len(names)]:
            if name in failed:
                continue
            print(f"== {name} {ALLOCATORS[name] or ''} (run {rep + 1} of {args.reps})", flush=True)
            r = run(name, args)
            if r is None:
                failed.append(name)
                continue
            runs[name].append(r)
            print(f"[{name}] {r['train_steps_per_s']:.2f} train steps/s, {r['infer_steps_per_s']:.2f} infer steps/s, "
                  f"own peak reserved {r['reserved_peak'] / MIB:.0f} MiB, peak used "
                  f"{(r['used_peak'] - r['used_base']) / MIB:.0f} MiB, {r['wall_s']:.0f} s", flush=True)
    results = {name: combine(rs) for name, rs in runs.items() if rs and name not in failed}
    if not results:
        print("torch_workload: no run finished")
        return 1
    table = rows(results)
    print("\n" + write_tables(args.out, table, results, args))
    st = stats_table(results)
    if st:
        with open(os.path.join(args.out, "torch_stats.md"), "w") as f:
            f.write(st + "\n")
        print("\n" + st)
    print("\nloss check (every training step's loss and every inference output against the native run):")
    for r in table:
        print(f"  {r['allocator']:16} losses {r['loss_check']:22} inference {r['infer_check']:22} "
              f"{'OK' if r['ok'] else 'MISMATCH'}")
    bad = [r["allocator"] for r in table if not r["ok"]]
    print(f"torch_workload: {'FAILED' if failed or bad else 'passed'}"
          + (f" (failed runs: {', '.join(failed)})" if failed else "") + (f" (mismatch: {', '.join(bad)})" if bad else ""))
    return 1 if failed or bad else 0


if __name__ == "__main__":
    sys.exit(main())
