"""The peer of BenchmarkEmbed: ONNX Runtime on the CPU running the same
sentence encoder (BERT, mean pooling, L2 normalisation) at the same shapes.

    # 1. export with torch (the Python that has it), into /tmp
    /usr/bin/python3 testdata/ort_peer.py export /path/to/all-MiniLM-L6-v2 /tmp/minilm.onnx
    # 2. time with onnxruntime (2 threads, the Go benchmark's core count)
    python3 testdata/ort_peer.py time /tmp/minilm.onnx [reps]
    # or time Go (testdata/embedserve) and onnxruntime turn by turn
    python3 testdata/ort_peer.py pair /tmp/minilm.onnx /path/to/all-MiniLM-L6-v2 [rounds]

(run from internal/bert). The export is transformers' BertModel where
transformers is importable (the graph ONNX Runtime's BERT fusions expect),
else the written-out BertModel of gen_golden.py; pooling and normalisation
are in the graph. Step 2 times the model as exported with every graph
optimisation on, and also after onnxruntime.transformers' BERT optimizer
(fused attention, LayerNorm, GELU) when that is importable, and prints
milliseconds per batch (median and best of the reps) for each shape.
"""
import json
import os
import sys
import time

SHAPES = [(8, 256), (1, 256), (64, 32)]  # (batch, tokens), as BenchmarkEmbed


def export(model_dir, out):
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import gen_golden as g

    with open(os.path.join(model_dir, "config.json")) as f:
        cfg = json.load(f)
    sd = g.load_safetensors(os.path.join(model_dir, "model.safetensors"))
    try:
        from transformers import BertConfig, BertModel

        bert = BertModel(BertConfig(**cfg), add_pooling_layer=False).eval()
        p = "bert." if "bert.embeddings.word_embeddings.weight" in sd else ""
        bert.load_state_dict({k[len(p) :]: v for k, v in sd.items() if k.startswith(p)}, strict=False)
        body = lambda ids, mask: bert(input_ids=ids, attention_mask=mask).last_hidden_state
        print("exporting transformers.BertModel")
    except ImportError:
        bert = None
        body = lambda ids, mask: g.bert_forward(sd, cfg, ids, mask)
        print("exporting the written-out BertModel (transformers is not importable)")

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert  # registered, so its weights export as initializers

        def forward(self, ids, mask):
            return g.pool(body(ids, mask), mask, "mean")

    ids = torch.ones(2, 16, dtype=torch.long)
    torch.onnx.export(
        Encoder(), (ids, torch.ones_like(ids)), out, input_names=["input_ids", "attention_mask"], output_names=["embeddings"],
        dynamic_axes={"input_ids": {0: "batch", 1: "seq"}, "attention_mask": {0: "batch", 1: "seq"}, "embeddings": {0: "batch"}},
        opset_version=14, do_constant_folding=True,
    )
    print("wrote", out)


def cpu():
    """CPU seconds of this process, all threads (the work, where wall time on
    a shared machine is mostly the process's share of the cores)."""
    import resource

    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def timeit(path, reps):
    import numpy as np
    import onnxruntime as ort

    models = [("exported", path)]
    try:
        from onnxruntime.transformers import optimizer

        opt = optimizer.optimize_model(path, model_type="bert", num_heads=0, hidden_size=0, opt_level=0)
        fused = path.replace(".onnx", "-fused.onnx")
        opt.save_model_to_file(fused)
        models.append(("bert-optimizer", fused))
        print("optimizer fusions:", opt.get_fused_operator_statistics())
    except Exception as e:  # the optimizer needs the onnx package
        print("no onnxruntime.transformers optimizer:", e)
    rng = np.random.default_rng(3)
    print("onnxruntime", ort.__version__, "intra_op_num_threads=2")
    for name, p in models:
        so = ort.SessionOptions()
        so.intra_op_num_threads = 2
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        if os.environ.get("ORT_NO_SPIN"):
            # Spinning workers burn CPU time while they wait; off, the CPU
            # time is the work's.
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        sess = ort.InferenceSession(p, so, providers=["CPUExecutionProvider"])
        for batch, n in SHAPES:
            ids = rng.integers(1000, 30522, size=(batch, n), dtype=np.int64)
            ids[:, 0], ids[:, -1] = 101, 102
            feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
            for _ in range(3):
                sess.run(None, feed)
            ts = []
            cpu0 = cpu()
            for _ in range(reps):
                t0 = time.perf_counter()
                sess.run(None, feed)
                ts.append((time.perf_counter() - t0) * 1e3)
            cpums = (cpu() - cpu0) * 1e3 / reps
            ts.sort()
            print("%-15s batch=%-3d tokens=%-4d median %8.1f ms  best %8.1f ms  cpu %8.1f ms/batch" % (name, batch, n, ts[len(ts) // 2], ts[0], cpums))


def session(path, threads=2):
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    if os.environ.get("ORT_NO_SPIN"):
        so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def pair(path, model_dir, rounds):
    """Times Go (testdata/embedserve, GOMAXPROCS=2) and ONNX Runtime turn by
    turn, one batch each, and reports both and their ratio per shape: on a
    machine shared with other jobs, neighbouring turns see the same load."""
    import subprocess

    import numpy as np

    threads = int(os.environ.get("PEER_THREADS", "2"))
    env = dict(os.environ, GOMAXPROCS=str(threads))
    go = subprocess.Popen(["go", "run", "./testdata/embedserve", model_dir], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    sess = session(path, threads)
    print("threads", threads, "ORT_NO_SPIN" if os.environ.get("ORT_NO_SPIN") else "")
    rng = np.random.default_rng(3)

    def go_time(batch, n):
        go.stdin.write("%d %d\n" % (batch, n))
        go.stdin.flush()
        return float(go.stdout.readline())

    def ort_time(batch, n):
        ids = rng.integers(1000, 30522, size=(batch, n), dtype=np.int64)
        ids[:, 0], ids[:, -1] = 101, 102
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
        t0 = time.perf_counter()
        sess.run(None, feed)
        return (time.perf_counter() - t0) * 1e3

    print("%-22s %10s %10s %10s %10s %12s" % ("shape", "go best", "ort best", "go median", "ort median", "median ratio"))
    for batch, n in SHAPES:
        for _ in range(2):
            go_time(batch, n), ort_time(batch, n)  # warm up
        gs, os_, rs = [], [], []
        for i in range(rounds):
            if i % 2:
                o, g = ort_time(batch, n), go_time(batch, n)
            else:
                g, o = go_time(batch, n), ort_time(batch, n)
            gs.append(g), os_.append(o), rs.append(g / o)
        med = lambda v: sorted(v)[len(v) // 2]
        print("batch=%-3d tokens=%-4d %10.1f %10.1f %10.1f %10.1f %12.2f" % (batch, n, min(gs), min(os_), med(gs), med(os_), med(rs)))
    go.stdin.close()
    go.wait()


if __name__ == "__main__":
    if sys.argv[1] == "export":
        export(sys.argv[2], sys.argv[3])
    elif sys.argv[1] == "pair":
        pair(sys.argv[2], sys.argv[3], int(sys.argv[4]) if len(sys.argv) > 4 else 20)
    else:
        timeit(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 10)
