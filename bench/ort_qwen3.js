#!/usr/bin/node
// ONNX Runtime (CPU) peer of the Qwen3 backbone configs timed by bench/qwen3.
//
// Runs a model exported by `bench/torch_qwen3.py --export-onnx FILE` with
// onnxruntime-node on the CPU execution provider (intra-op threads from
// --threads, one inter-op thread, sequential execution, all graph
// optimizations), checks its output against FILE.ref.f32 (PyTorch's forward
// for the same ids) and prints one JSON line:
//   {"ms": <minimum of --reps timed runs>, "max_abs_diff": ..., "threads": ..., "ort_version": ...}
//
// onnxruntime-node is found in --modules DIR (a node_modules directory) or on
// NODE_PATH. Install it without its post-install download step:
//   mkdir -p /tmp/ortpeer && cd /tmp/ortpeer && npm install --ignore-scripts onnxruntime-node@1.30.0
//   node bench/ort_qwen3.js --modules /tmp/ortpeer/node_modules --model /tmp/x/h256-2048.onnx
// `--version` prints {"ort_version": ...} and exits (checks the installation).
'use strict';

const fs = require('fs');
const path = require('path');

// Default tolerance on the largest absolute difference from PyTorch. The
// outputs are RMS-normalized (values of order 1); measured differences on the
// bench configs are below 1e-5 (see docs/performance.md), so 1e-3 leaves a
// wide margin while still catching a wrong graph (differences of order 1).
const DEFAULT_TOL = 1e-3;
const VOCAB = 4096; // as torch_qwen3.py and bench/qwen3

function parseArgs(argv) {
  const a = {model: null, ref: null, modules: null, threads: 2, reps: 3, tol: DEFAULT_TOL, version: false};
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) fail(`${k} needs a value`);
      return argv[++i];
    };
    switch (k) {
      case '--model': a.model = val(); break;
      case '--ref': a.ref = val(); break;
      case '--modules': a.modules = val(); break;
      case '--threads': a.threads = parseInt(val(), 10); break;
      case '--reps': a.reps = parseInt(val(), 10); break;
      case '--tol': a.tol = parseFloat(val()); break;
      case '--version': a.version = true; break;
      default: fail(`unknown argument ${k}`);
    }
  }
  if (!(a.threads >= 1) || !(a.reps >= 1) || !(a.tol > 0)) fail('--threads and --reps must be >= 1, --tol > 0');
  return a;
}

function fail(msg) {
  process.stderr.write(`ort_qwen3.js: ${msg}\n`);
  process.exit(1);
}

function loadOrt(modules) {
  const where = modules ? path.join(path.resolve(modules), 'onnxruntime-node') : 'onnxruntime-node';
  try {
    const ort = require(where);
    let version = ort.env && ort.env.versions && ort.env.versions.node;
    if (!version) version = require(path.join(path.dirname(require.resolve(where)), '..', '..', 'package.json')).version;
    return {ort, version};
  } catch (e) {
    fail(`cannot load onnxruntime-node from ${modules ? where : 'NODE_PATH'} (${e.message.split('\n')[0]}); ` +
      'install it with `npm install --ignore-scripts onnxruntime-node@1.30.0` in a directory ' +
      'and pass its node_modules with --modules (or NODE_PATH)');
  }
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const {ort, version} = loadOrt(a.modules || null);
  if (a.version) {
    console.log(JSON.stringify({ort_version: version}));
    return;
  }
  if (!a.model) fail('--model FILE is required');
  const refPath = a.ref || a.model + '.ref.f32';
  const refBuf = fs.readFileSync(refPath);
  const ref = new Float32Array(refBuf.buffer.slice(refBuf.byteOffset, refBuf.byteOffset + refBuf.length));

  const session = await ort.InferenceSession.create(a.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  });
  const inMeta = session.inputMetadata && session.inputMetadata[0];
  let tokens = inMeta && inMeta.shape ? Number(inMeta.shape[1]) : NaN;
  if (!(tokens > 0)) fail(`cannot read the sequence length from the model's input ${JSON.stringify(inMeta)}`);
  const ids = new BigInt64Array(tokens);
  for (let i = 0; i < tokens; i++) ids[i] = BigInt((i * 7919) % VOCAB);
  const feeds = {[session.inputNames[0]]: new ort.Tensor('int64', ids, [1, tokens])};
  const outName = session.outputNames[0];

  let best = Infinity;
  let out = null;
  for (let i = -1; i < a.reps; i++) { // i = -1: warm-up
    const t = process.hrtime.bigint();
    const res = await session.run(feeds);
    const ms = Number(process.hrtime.bigint() - t) / 1e6;
    out = res[outName];
    if (i >= 0 && ms < best) best = ms;
  }
  const got = out.data;
  if (got.length !== ref.length) fail(`output has ${got.length} values ${JSON.stringify(out.dims)}, ${refPath} has ${ref.length}`);
  let maxDiff = 0;
  for (let i = 0; i < got.length; i++) {
    const d = Math.abs(got[i] - ref[i]);
    if (!(d <= maxDiff)) maxDiff = d; // NaN propagates
  }
  const res = {ms: best, max_abs_diff: maxDiff, tol: a.tol, threads: a.threads, ort_version: version,
    tokens, shape: out.dims};
  console.log(JSON.stringify(res));
  if (!(maxDiff <= a.tol)) fail(`output differs from PyTorch (${refPath}): max abs diff ${maxDiff} > tolerance ${a.tol}`);
  await session.release();
}

main().catch((e) => fail(e && e.stack || String(e)));
