// Timing shared by the benchmark scripts: calibrated loops, interleaved repeats.
let sink = 0;

export function timeLoop(fn, n) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) sink ^= fn() ? 1 : 0;
  return Number(process.hrtime.bigint() - t0) / 1e9;
}

/** Loop count for fn so that one repeat takes about `target` seconds. */
export function calibrate(fn, target) {
  let n = 1;
  let t;
  for (;;) {
    t = timeLoop(fn, n);
    if (t >= target / 10) break;
    n *= 10;
  }
  return Math.max(1, Math.round((n * target) / t));
}

/** Median and best seconds per call of each function in `fns` (name -> fn): calibrate each, run
 * one warm-up repeat each (JIT), then `repeats` rounds in which every function runs one repeat,
 * so that load changes on a shared machine hit all contenders alike. */
export function measureGroup(fns, target, repeats) {
  const entries = Object.entries(fns).map(([name, fn]) => ({ name, fn, n: calibrate(fn, target), runs: [] }));
  for (const e of entries) timeLoop(e.fn, e.n);
  for (let r = 0; r < repeats; r++) {
    for (const e of entries) e.runs.push(timeLoop(e.fn, e.n) / e.n);
  }
  const out = {};
  for (const { name, runs } of entries) {
    runs.sort((x, y) => x - y);
    const mid = runs.length >> 1;
    out[name] = [runs.length % 2 ? runs[mid] : (runs[mid - 1] + runs[mid]) / 2, runs[0]];
  }
  return out;
}

