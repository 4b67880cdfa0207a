// ONNX Runtime's CPU provider as a benchmark engine for the Python benches:
// loads MODEL.onnx with THREADS intra-op threads (one inter-op thread, graph
// optimisation level "all"), then runs the model once per line on stdin and
// prints the run's wall time in ms. The timing covers session.run only, as
// the SDK's engines are timed around their call. A line is
//   D0xD1x...                    a random float32 input of that shape (made
//                                once per shape, outside the timing)
//   file PATH DTYPE D0xD1x...    the input in PATH: raw little-endian
//                                float32 or int64 data of that shape (read
//                                once per path)
//   file PATH DTYPE D0xD1x... OUT  the same, and the model's first output
//                                written to OUT (raw float32) after the run,
//                                so the caller can compare numbers
//
//   node tools/bench/ort_runner.js MODEL.onnx THREADS
//
// onnxruntime-node comes from tools/bench/setup_onnxruntime.sh (NODE_PATH).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');
const readline = require('readline');

function randomInput(name, key) {
  const dims = key.split('x').map(Number);
  const data = Float32Array.from(
      {length: dims.reduce((a, b) => a * b, 1)}, () => Math.random());
  return {[name]: new ort.Tensor('float32', data, dims)};
}

function fileInput(name, path, dtype, shape) {
  const dims = shape.split('x').map(Number);
  const bytes = fs.readFileSync(path);
  const buffer = bytes.buffer.slice(
      bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  let data;
  if (dtype === 'float32') {
    data = new Float32Array(buffer);
  } else if (dtype === 'int64') {
    data = new BigInt64Array(buffer);
  } else {
    throw new Error(`unsupported input dtype ${dtype} (float32 or int64)`);
  }
  return {[name]: new ort.Tensor(dtype, data, dims)};
}

async function main() {
  const [model, threads] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const inputName = session.inputNames[0];
  const outputName = session.outputNames[0];
  const inputs = new Map();
  const lines = readline.createInterface({input: process.stdin});
  for await (const line of lines) {
    const words = line.trim().split(/\s+/);
    const key = words.slice(0, 4).join(' ');
    if (!inputs.has(key)) {
      inputs.set(key, words[0] === 'file' ?
          fileInput(inputName, words[1], words[2], words[3]) :
          randomInput(inputName, words[0]));
    }
    const start = process.hrtime.bigint();
    const results = await session.run(inputs.get(key));
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (words[0] === 'file' && words.length > 4) {
      const out = Float32Array.from(results[outputName].data);
      fs.writeFileSync(words[4], Buffer.from(out.buffer));
    }
    process.stdout.write(`${ms}\n`);
  }
}

main().catch((e) => {
  process.stderr.write(`ort_runner: ${e.stack || e}\n`);
  process.exit(1);
});
