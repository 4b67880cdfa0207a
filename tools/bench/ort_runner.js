// ONNX Runtime's CPU provider as a benchmark engine for the Python benches:
// loads MODEL.onnx with THREADS intra-op threads, then for each line on
// stdin, "D0xD1x..." (an input shape), runs the model once on a random
// float32 input of that shape (made once per shape, outside the timing)
// and prints the run's wall time in ms. The timing covers session.run only,
// as the SDK's engines are timed around their call.
//
//   node tools/bench/ort_runner.js MODEL.onnx THREADS
//
// onnxruntime-node comes from tools/bench/setup_onnxruntime.sh (NODE_PATH).
'use strict';
const ort = require('onnxruntime-node');
const readline = require('readline');

async function main() {
  const [model, threads] = process.argv.slice(2);
  const session = await ort.InferenceSession.create(model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: Number(threads),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
  });
  const inputName = session.inputNames[0];
  const inputs = new Map();
  const lines = readline.createInterface({input: process.stdin});
  for await (const line of lines) {
    const key = line.trim();
    if (!inputs.has(key)) {
      const dims = key.split('x').map(Number);
      const data = Float32Array.from(
          {length: dims.reduce((a, b) => a * b, 1)}, () => Math.random());
      inputs.set(key, {[inputName]: new ort.Tensor('float32', data, dims)});
    }
    const start = process.hrtime.bigint();
    await session.run(inputs.get(key));
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    process.stdout.write(`${ms}\n`);
  }
}

main().catch((e) => {
  process.stderr.write(`ort_runner: ${e.stack || e}\n`);
  process.exit(1);
});
