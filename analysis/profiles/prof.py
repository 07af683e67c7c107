#!/usr/bin/env python3
"""Folds `perf script` output, renders a flame graph as SVG and splits CPU samples into categories.

usage:
  prof.py fold  < perf-script.txt > stacks.folded      # "thread;root;...;leaf count" per line
  prof.py svg   TITLE < stacks.folded > flame.svg
  prof.py split RULESET < stacks.folded                # markdown table of shares (RULESET: dotnet | native)

Why it folds and draws itself: no package here serves Brendan Gregg's FlameGraph or inferno (`apt-cache search
flamegraph` finds nothing on Debian 12), and perf's own `perf script report stackcollapse` keeps neither the shared
object of a frame without a symbol nor which frames are libc's, both of which the split below needs (a frame in
libcoreclr.so or libSystem.Native.so, a libc syscall wrapper). The folded format is FlameGraph's, so its
flamegraph.pl or inferno-flamegraph draw these files too where they are installed.
"""
import html
import re
import sys
from collections import defaultdict

# ------------------------------------------------------------------ folding

HEADER = re.compile(r"^(\S.*?)\s+(\d+)(?:/(\d+))?\s+(?:\[\d+\]\s+)?[\d.]+:\s")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")


def clean_symbol(sym, dso):
    sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
    if sym in ("[unknown]", ""):
        base = dso.rsplit("/", 1)[-1]
        return f"[{base}]"
    # .NET perf maps append "[OptimizedTier1]" etc.; keep the method, drop the tier and the signature.
    sym = re.sub(r"\[(?:Optimized|OptimizedTier1|Tier0|Tier1|PreJIT|QuickJitted|Instrumented)[^\]]*\]$", "", sym).strip()
    sym = re.sub(r"\(.*\)$", "", sym)
    if "kernel.kallsyms" in dso or dso.startswith("[kernel"):
        return sym + "_[k]"
    if "/libc.so" in dso or "/libpthread" in dso:
        return sym + "_[c]"
    # perf-map names read "instance void [Assembly] Namespace.Type::Method": keep "Namespace.Type::Method".
    m = re.search(r"\[[\w.]+\] ([^\s\[]+::.+)$", sym)
    return m.group(1) if m else sym


def thread_group(comm):
    # ".NET TP Worker" and friends keep their name; numbered workers collapse into one.
    return re.sub(r"[-_ ]?\d+$", "", comm.strip()) or comm


def fold(lines):
    counts = defaultdict(int)
    comm, frames = None, []

    def flush():
        if comm is not None:
            counts[";".join([thread_group(comm)] + list(reversed(frames)))] += 1

    for line in lines:
        line = line.rstrip("\n")
        if not line.strip():
            flush()
            comm, frames = None, []
            continue
        if comm is None:
            m = HEADER.match(line)
            if m:
                comm, frames = m.group(1), []
            continue
        m = FRAME.match(line)
        if m:
            frames.append(clean_symbol(m.group(1), m.group(2)).replace(";", ","))
    flush()
    for stack, n in sorted(counts.items()):
        print(f"{stack} {n}")


def read_folded(lines):
    for line in lines:
        line = line.rstrip("\n")
        if not line:
            continue
        stack, _, n = line.rpartition(" ")
        yield stack.split(";"), int(n)

# ------------------------------------------------------------------ SVG


def color(name):
    h = sum(ord(c) for c in name) % 40
    if name.endswith("_[k]"):
        return f"rgb(230,{120 + h},60)"            # kernel: orange
    if "::" in name and not name.startswith("["):
        return f"rgb({80 + h},{170 + h // 2},{90 + h})"  # managed (.NET methods): green
    if name.startswith("["):
        return "rgb(185,185,185)"                  # unresolved (stripped binaries): grey
    return f"rgb(220,{70 + h},{60 + h})"           # native with symbols (libc, threads): red


def svg(title, lines):
    root = {"n": 0, "c": {}}
    for frames, n in read_folded(lines):
        node = root
        node["n"] += n
        for f in frames:
            node = node["c"].setdefault(f, {"n": 0, "c": {}})
            node["n"] += n
    total = root["n"] or 1
    width, row, pad = 1600, 16, 30
    rects = []
    max_depth = [0]

    def walk(node, name, x, depth):
        w = node["n"] / total * (width - 20)
        if w < 1.0:
            return
        max_depth[0] = max(max_depth[0], depth)
        rects.append((name, x, depth, w, node["n"]))
        cx = x
        for child_name, child in sorted(node["c"].items()):
            walk(child, child_name, cx, depth + 1)
            cx += child["n"] / total * (width - 20)

    walk(root, "all", 10, 0)
    height = (max_depth[0] + 1) * row + pad + 20
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="monospace" font-size="11">',
           f'<rect width="100%" height="100%" fill="rgb(250,250,245)"/>',
           f'<text x="10" y="18" font-size="13">{html.escape(title)} — {total} samples; orange kernel, green .NET, red native, grey unresolved</text>']
    for name, x, depth, w, n in rects:
        y = height - (depth + 1) * row - 4
        label = html.escape(name)
        pct = 100.0 * n / total
        out.append(f'<g><title>{label} ({n} samples, {pct:.2f}%)</title>'
                   f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 1}" fill="{color(name)}" rx="1"/>')
        chars = int(w / 6.6)
        if chars >= 3:
            text = name if len(name) <= chars else name[: chars - 2] + ".."
            out.append(f'<text x="{x + 2:.1f}" y="{y + row - 4}">{html.escape(text)}</text>')
        out.append("</g>")
    out.append("</svg>")
    print("\n".join(out))

# ------------------------------------------------------------------ categories

SYSCALL = re.compile(r"^(?:__x64_sys_|__do_sys_|__se_sys_|ksys_)(\w+?)_\[k\]$")

# (category, regex on a frame), first match walking from the leaf to the root wins ("self" attribution to the
# innermost recognisable layer). Kernel samples are split by syscall first.
DOTNET_RULES = [
    ("GC", r"(WKS|SVR)::|gc_heap|GCHeap|GarbageCollect|memset_repmovs|Alloc.*Slow"),
    ("JIT / tiering", r"libclrjit|TieredCompilation|CallCountingManager|\[libclrjit"),
    ("LLHttp (client library)", r"^LLHttp\."),
    ("request parsing (Kestrel HttpParser + LLRP Http1)", r"HttpParser|LLRP\.Http1\.|KestrelParser|HttpUtilities|HttpCharacters"),
    ("System.IO.Pipelines", r"^System\.IO\.Pipelines\."),
    ("Kestrel socket transport", r"Kestrel\.Transport\.Sockets|SocketSenderPool|SocketSender|SocketReceiver|SocketConnection"),
    ("Kestrel core (connection dispatch, heartbeat)", r"Server\.Kestrel\.Core|Microsoft\.AspNetCore\.Connections"),
    ("System.Net.Sockets (managed socket engine)", r"^System\.Net\.Sockets\.|SocketAsyncEngine|SocketAsyncContext|libSystem\.Native|SystemNative_"),
    ("thread pool dispatch", r"ThreadPool|WorkStealingQueue|ThreadPoolWorkQueue|LowLevelLifoSemaphore|PortableThreadPool|IOCompletionPoller|ThreadPoolTypedWorkItemQueue|WorkerThread"),
    ("async machinery (state machines, ExecutionContext, ValueTask sources)", r"AsyncTaskMethodBuilder|AsyncValueTaskMethodBuilder|AsyncStateMachineBox|ExecutionContext|ManualResetValueTaskSourceCore|PoolingAsyncValueTaskMethodBuilder|System\.Threading\.Tasks\.|ValueTask|Awaiter|CancellationToken"),
    ("LLRP (connection, forwarder)", r"^LLRP\."),
    ("other managed (CoreLib etc.)", r"^System\.|^Microsoft\."),
]

NATIVE_RULES = []


def syscall_name(stack):
    """The syscall a kernel sample belongs to: the handler below do_syscall_64, else the libc wrapper above it."""
    for i, f in enumerate(stack):
        if f.startswith("entry_SYSCALL_64"):
            for g in stack[i + 1:]:
                if g.startswith(("do_syscall_64", "x64_sys_call")):
                    continue
                if g.startswith(("exit_to_user_mode", "syscall_exit", "syscall_trace_enter", "__rseq", "schedule")):
                    return "(syscall entry/exit work: preemption on return, rseq, tracing)"
                return re.sub(r"^(__x64_sys_|__do_sys_|__se_sys_|ksys_|do_|__sys_)", "", g[:-4])
            wrapper = stack[i - 1] if i > 0 else "?"
            return re.sub(r"^(__GI_)?_*(libc_)?", "", wrapper.replace("_[c]", "")) + " (entry)"
    return "(no syscall: interrupts, softirq, scheduler, page faults)"


THREAD_RULES = [("JIT / tiering", re.compile(r"Tiered Com|JIT")), ("GC", re.compile(r"GC|BGC"))]
OPAQUE = re.compile(r"^\[(libcoreclr\.so|libSystem\.Native\.so)\]$|_\[c\]$")


def classify(rules, frames):
    """Innermost recognisable layer of a stack (leaf last); unresolved runtime frames are transparent."""
    for f in reversed(frames):
        if f.endswith("_[k]") or OPAQUE.match(f):
            continue
        hit = next((c for c, rx in rules if rx.search(f)), None)
        if hit:
            return hit
    return None


def split(ruleset, lines):
    rules = [(name, re.compile(rx)) for name, rx in (DOTNET_RULES if ruleset == "dotnet" else NATIVE_RULES)]
    cats, syscalls, threads, by_layer = defaultdict(int), defaultdict(int), defaultdict(int), defaultdict(int)
    total = kernel = opaque = 0
    for frames, n in read_folded(lines):
        total += n
        threads[frames[0]] += n
        stack = frames[1:]
        layer = next((c for c, rx in THREAD_RULES if rx.search(frames[0])), None) if ruleset == "dotnet" else None
        layer = layer or classify(rules, stack)
        if stack and stack[-1].endswith("_[k]"):
            kernel += n
            name = syscall_name(stack)
            syscalls[name] += n
            by_layer[f"{name} ← {layer or 'unresolved'}"] += n
            cats["kernel (all syscalls and interrupts)"] += n
            continue
        if stack and OPAQUE.match(stack[-1]):
            opaque += n
        if layer is None and stack and stack[-1].endswith("_[c]"):
            layer = "libc"
        cats[layer or "user: unresolved / other"] += n
    t = total or 1
    print(f"samples: {total}; kernel {100.0 * kernel / t:.1f} %, user {100.0 * (total - kernel) / t:.1f} %"
          f" (of which {100.0 * opaque / t:.1f} % in libc or stripped runtime native code, counted under the managed caller)\n")
    print("| category (self: innermost recognisable layer) | share of process CPU |\n|---|--:|")
    for c, n in sorted(cats.items(), key=lambda kv: -kv[1]):
        print(f"| {c} | {100.0 * n / t:.1f} % |")
    print("\n| kernel time by syscall (a loopback send also runs the peer's TCP receive inline) | share of process CPU |\n|---|--:|")
    for c, n in sorted(syscalls.items(), key=lambda kv: -kv[1])[:12]:
        print(f"| {c} | {100.0 * n / t:.1f} % |")
    if ruleset == "dotnet":
        print("\n| syscall ← issuing layer | share of process CPU |\n|---|--:|")
        for c, n in sorted(by_layer.items(), key=lambda kv: -kv[1])[:14]:
            print(f"| {c} | {100.0 * n / t:.1f} % |")
    print("\n| thread | share of process CPU |\n|---|--:|")
    for c, n in sorted(threads.items(), key=lambda kv: -kv[1])[:8]:
        print(f"| {c} | {100.0 * n / t:.1f} % |")


def inclusive(patterns, lines):
    """Share of samples whose stack contains a frame matching each pattern (inclusive time)."""
    data = list(read_folded(lines))
    total = sum(n for _, n in data) or 1
    print("| stack contains | inclusive share |\n|---|--:|")
    for p in patterns:
        rx = re.compile(p)
        n = sum(c for frames, c in data if any(rx.search(f) for f in frames[1:]))
        print(f"| `{p}` | {100.0 * n / total:.1f} % |")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "fold":
        fold(sys.stdin)
    elif cmd == "svg" and len(sys.argv) == 3:
        svg(sys.argv[2], sys.stdin)
    elif cmd == "split" and len(sys.argv) == 3 and sys.argv[2] in ("dotnet", "native"):
        split(sys.argv[2], sys.stdin)
    elif cmd == "inclusive" and len(sys.argv) >= 3:
        inclusive(sys.argv[2:], sys.stdin)
    else:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
