// TOON text encode/decode throughput in Node: polywire vs the reference @toon-format/toon, with
// JSON.stringify / JSON.parse of the same data for scale.
//
// Run from the repository root:
//
//     node bench/toon_bench.mjs [--quick] [--datasets orders,repos] [--write-texts DIR]
//
// Datasets: bench/toon_datasets.mjs (the twin of bench/toon_datasets.py; both print the same
// digests): 500 e-commerce orders, 2,000 flat analytics rows, 100 repositories with long
// descriptions, one deeply nested config object, shaped like the official TOON benchmark's.
//
// Contenders, each skipped with a note when it cannot be loaded:
// * polywire: `encode(value)` / `decode(text)` from `polywire/toon` (this package, by its own
//   name), else bindings-node/lib/toon.js of this checkout; POLYWIRE_TOON=<path> overrides.
// * reference: `encode` / `decode` of @toon-format/toon (4.4.0, a devDependency), resolved from
//   the repository's node_modules; TOON_REFERENCE=<path> overrides: the package directory, its
//   entry file, or a directory whose node_modules holds it.
// * JSON: JSON.stringify / JSON.parse of the same data: the yardstick.
//
// Before timing, polywire's text is compared byte for byte with the reference's, and each decoder
// must give back the dataset (same values, same key order) from the reference's text and from its
// own encoder's text. A difference is reported; it does not stop the run. Both decoders are timed
// on the reference's text. --write-texts DIR writes the reference's text of each dataset as
// DIR/<dataset>.toon, which `python bench/toon_bench.py --reference-dir DIR` compares against.

import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { buildAll, digest, DATASETS } from './toon_datasets.mjs';
import { measureGroup } from './timing.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));

// ---------------------------------------------------------------- loading
async function importPath(p) {
  return import(pathToFileURL(p).href);
}

/** Tries each loader in turn; returns { mod, from } or { mod: null, errors }. */
async function firstLoadable(loaders) {
  const errors = [];
  for (const [from, load] of loaders) {
    try {
      return { mod: await load(), from };
    } catch (e) {
      errors.push(`${from}: ${String(e && e.message).split('\n')[0]}`);
    }
  }
  return { mod: null, errors };
}

function api(mod) {
  const m = mod && typeof mod.encode !== 'function' && mod.default ? mod.default : mod;
  if (!m || typeof m.encode !== 'function' || typeof m.decode !== 'function') {
    throw new Error('module has no encode/decode functions');
  }
  return m;
}

async function loadReference() {
  // Resolve the entry file first (for the version), then import it.
  const loaders = [];
  const env = process.env.TOON_REFERENCE;
  if (env) {
    const p = path.resolve(env);
    loaders.push([`TOON_REFERENCE=${env}`, () => {
      if (fs.statSync(p).isFile()) return p;
      // A package directory resolves itself by name; another directory, through its node_modules.
      return createRequire(path.join(p, 'noop.js')).resolve('@toon-format/toon');
    }]);
  }
  loaders.push(['@toon-format/toon', () => createRequire(import.meta.url).resolve('@toon-format/toon')]);
  let entry;
  const r = await firstLoadable(loaders.map(([from, resolve]) => [from, async () => {
    entry = resolve();
    return api(await importPath(entry));
  }]));
  if (r.mod) {
    r.version = '(version unknown)';
    for (let dir = path.dirname(entry), i = 0; i < 4; i++, dir = path.dirname(dir)) {
      try {
        const j = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
        if (j.name === '@toon-format/toon') {
          r.version = j.version;
          break;
        }
      } catch {
        // no package.json at this level
      }
    }
  }
  return r;
}

async function loadPolywire() {
  const require = createRequire(import.meta.url);
  const loaders = [];
  const add = (spec) => loaders.push([spec, async () => {
    try {
      return api(require(spec));
    } catch (e) {
      // An ESM-only entry, or a require error: try import() before giving up.
      try {
        return api(await (spec.startsWith('/') ? importPath(spec) : import(spec)));
      } catch {
        throw e;
      }
    }
  }]);
  if (process.env.POLYWIRE_TOON) add(path.resolve(process.env.POLYWIRE_TOON));
  add('polywire/toon');
  add(path.join(here, '..', 'bindings-node', 'lib', 'toon.js'));
  return firstLoadable(loaders);
}

// ---------------------------------------------------------------- checks
/** Where a and b differ as JSON values (key order included), or null. */
function jsonDiff(a, b, at = '$') {
  if (a === b) return null;
  const ta = Array.isArray(a) ? 'array' : a === null ? 'null' : typeof a;
  const tb = Array.isArray(b) ? 'array' : b === null ? 'null' : typeof b;
  if (ta !== tb) return `${at}: ${ta} ${JSON.stringify(a)?.slice(0, 40)} vs ${tb} ${JSON.stringify(b)?.slice(0, 40)}`;
  if (ta === 'array') {
    if (a.length !== b.length) return `${at}: ${a.length} items vs ${b.length}`;
    for (let i = 0; i < a.length; i++) {
      const d = jsonDiff(a[i], b[i], `${at}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  if (ta === 'object') {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    if (ka.join('\u0000') !== kb.join('\u0000')) return `${at}: keys ${ka.slice(0, 6)} vs ${kb.slice(0, 6)}`;
    for (const k of ka) {
      const d = jsonDiff(a[k], b[k], `${at}.${k}`);
      if (d) return d;
    }
    return null;
  }
  return Object.is(a, b) ? null : `${at}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
}

function firstDifference(text, ref) {
  const a = text.split('\n');
  const b = ref.split('\n');
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (a[i] !== b[i]) return `line ${i + 1}: ${JSON.stringify(a[i].slice(0, 70))} vs ${JSON.stringify(b[i].slice(0, 70))}`;
  }
  return `${a.length} lines vs ${b.length}`;
}

// ---------------------------------------------------------------- timing
// (bench/timing.mjs: calibrated, interleaved repeats)

const fmtOps = (s) => (1 / s >= 10 ? Math.round(1 / s).toLocaleString('en-US') : (1 / s).toFixed(1));
const fmtTime = (s) => (s >= 1e-3 ? `${(s * 1e3).toFixed(2)} ms` : `${(s * 1e6).toFixed(1)} µs`);
const ratio = (a, b) => (a && b ? `${(b / a).toFixed(2)}x` : '–');
const bytes = (s) => Buffer.byteLength(s, 'utf8');

// ---------------------------------------------------------------- main
async function main() {
  const argv = process.argv.slice(2);
  const opt = (name) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  let target = 0.15;
  let repeats = 7;
  if (argv.includes('--quick')) [target, repeats] = [0.02, 3];
  if (opt('--target')) target = Number(opt('--target'));
  if (opt('--repeats')) repeats = Number(opt('--repeats'));
  const names = (opt('--datasets') ?? Object.keys(DATASETS).join(',')).split(',').filter(Boolean);
  for (const n of names) {
    if (!(n in DATASETS)) {
      console.error(`unknown dataset ${n}; choose from ${Object.keys(DATASETS).join(', ')}`);
      process.exit(2);
    }
  }
  const writeDir = opt('--write-texts');

  console.log(`# TOON text: encode and decode, Node ${process.version} on ${os.arch()}\n`);
  const contenders = []; // [name, encode, decode]
  const ref = await loadReference();
  const pw = await loadPolywire();
  if (pw.mod) {
    console.log(`- polywire from ${pw.from}`);
    contenders.push(['polywire', (v) => pw.mod.encode(v), (t) => pw.mod.decode(t)]);
  } else {
    console.log(`- polywire not loadable, skipped (${pw.errors.join('; ')})`);
  }
  if (ref.mod) {
    console.log(`- reference: @toon-format/toon ${ref.version} from ${ref.from}`);
    contenders.push(['reference', (v) => ref.mod.encode(v), (t) => ref.mod.decode(t)]);
  } else {
    console.log(`- @toon-format/toon not loadable, skipped: npm install, or TOON_REFERENCE=<path> (${ref.errors.join('; ')})`);
  }
  contenders.push(['JSON', (v) => JSON.stringify(v), (t) => JSON.parse(t)]);

  const all = buildAll();
  const data = Object.fromEntries(names.map((n) => [n, all[n]]));
  const findings = [];
  const status = new Map(); // `${dataset}|${name}|enc/dec` -> short status
  const decodeInput = {};

  // ---- checks before timing
  console.log('');
  console.log('| dataset | JSON bytes | TOON bytes | sha256 (JSON) | polywire text | round trips |');
  console.log('|---|---:|---:|---|---|---|');
  if (writeDir) fs.mkdirSync(writeDir, { recursive: true });
  for (const [n, value] of Object.entries(data)) {
    const texts = {};
    for (const [name, enc] of contenders) {
      try {
        texts[name] = enc(value);
      } catch (e) {
        findings.push(`${n}: ${name} encode threw ${e && e.message}`);
        status.set(`${n}|${name}|enc`, 'throws');
      }
    }
    const refText = texts.reference;
    if (writeDir && refText !== undefined) fs.writeFileSync(path.join(writeDir, `${n}.toon`), refText);
    let pwStatus = 'skipped';
    if (texts.polywire !== undefined && refText !== undefined) {
      pwStatus = texts.polywire === refText ? '= reference' : 'DIFFERS';
      status.set(`${n}|polywire|enc`, texts.polywire === refText ? '= ref' : 'differs');
      if (texts.polywire !== refText) {
        findings.push(`${n}: polywire text differs from the reference (${bytes(texts.polywire)} vs ${bytes(refText)} B), ${firstDifference(texts.polywire, refText)}`);
      }
    }
    if (refText !== undefined) status.set(`${n}|reference|enc`, 'ref');
    const sample = refText ?? texts.polywire;
    const trips = [];
    for (const [name, , dec] of contenders) {
      const inputs = name === 'JSON' ? [['own', texts.JSON]] : [['ref', sample]];
      if (name === 'polywire' && texts.polywire !== undefined && texts.polywire !== sample) inputs.push(['own', texts.polywire]);
      let verdict = 'ok';
      for (const [label, text] of inputs) {
        if (text === undefined) continue;
        let d;
        try {
          d = jsonDiff(dec(text), value);
        } catch (e) {
          d = `threw ${e && e.message}`;
          if (label !== 'own' || name === 'JSON') verdict = 'throws';
        }
        if (d) {
          if (verdict === 'ok') verdict = 'WRONG';
          findings.push(`${n}: ${name} decode of the ${label} text != dataset: ${d}`);
        }
      }
      status.set(`${n}|${name}|dec`, verdict);
      trips.push(`${name} ${verdict}`);
    }
    decodeInput[n] = sample;
    console.log(`| ${n} | ${bytes(JSON.stringify(value)).toLocaleString('en-US')} | ${sample === undefined ? '–' : bytes(sample).toLocaleString('en-US')} | ${digest(value)} | ${pwStatus} | ${trips.join(', ')} |`);
  }
  console.log('');

  // ---- timing
  const res = new Map();
  for (const [n, value] of Object.entries(data)) {
    const enc = {};
    const dec = {};
    for (const [name, encode, decode] of contenders) {
      if (status.get(`${n}|${name}|enc`) !== 'throws') enc[name] = () => encode(value);
      const src = name === 'JSON' ? JSON.stringify(value) : decodeInput[n];
      if (src !== undefined && status.get(`${n}|${name}|dec`) !== 'throws') dec[name] = () => decode(src);
    }
    for (const [kind, fns] of [['enc', enc], ['dec', dec]]) {
      for (const [name, r] of Object.entries(measureGroup(fns, target, repeats))) res.set(`${n}|${name}|${kind}`, r);
    }
  }
  const med = (n, name, kind) => res.get(`${n}|${name}|${kind}`)?.[0];

  const table = (kind, title) => {
    console.log(`## ${title}\n`);
    console.log('| dataset | contender | ops/s (median) | time/op | best ops/s | vs reference | vs JSON | check |');
    console.log('|---|---|---:|---:|---:|---:|---:|---|');
    for (const n of Object.keys(data)) {
      for (const [name] of contenders) {
        const r = res.get(`${n}|${name}|${kind}`);
        if (!r) continue;
        const [m, best] = r;
        const check = name === 'JSON' ? 'JSON' : status.get(`${n}|${name}|${kind}`) ?? '';
        console.log(`| ${n} | ${name} | ${fmtOps(m)} | ${fmtTime(m)} | ${fmtOps(best)} | ${ratio(m, med(n, 'reference', kind))} | ${ratio(m, med(n, 'JSON', kind))} | ${check} |`);
      }
    }
    console.log('');
  };
  table('enc', 'Encode (value -> text)');
  table('dec', 'Decode (text -> value)');

  console.log('## polywire against the targets\n');
  if (!pw.mod) {
    console.log('polywire skipped (polywire/toon not loadable): no ratios.\n');
  } else {
    const mark = (a, b, goal) => (a && b ? `${(b / a).toFixed(2)}x ${b / a >= goal ? '✓' : '✗'}` : '–');
    console.log('| dataset | encode vs reference (≥ 8x) | decode vs reference (≥ 15x) | encode vs JSON.stringify (≥ 0.5x) | decode vs JSON.parse (≥ 0.5x) |');
    console.log('|---|---:|---:|---:|---:|');
    for (const n of Object.keys(data)) {
      const pe = med(n, 'polywire', 'enc');
      const pd = med(n, 'polywire', 'dec');
      console.log(`| ${n} | ${mark(pe, med(n, 'reference', 'enc'), 8)} | ${mark(pd, med(n, 'reference', 'dec'), 15)} | ${mark(pe, med(n, 'JSON', 'enc'), 0.5)} | ${mark(pd, med(n, 'JSON', 'dec'), 0.5)} |`);
    }
    console.log('');
  }
  console.log(`Timing: per contender, the loop count calibrated so one repeat takes about ${target} s and one warm-up repeat; then ${repeats} rounds in which each contender runs one repeat in turn; medians. Ratios are ops/s over the named contender's ops/s in this run (higher is faster). Both TOON decoders read the reference's text; JSON.parse reads JSON.stringify's. 'check': '= ref' byte-identical to the reference's text, 'ok' decodes to the dataset exactly.\n`);
  if (findings.length) {
    console.log('Differences found by the checks:');
    for (const f of findings) console.log(`- ${f}`);
  } else if (contenders.length === 1) {
    console.log('No TOON contender was loaded: nothing was compared.');
  } else {
    console.log("Checks: polywire's text equals the reference's (when both are loaded), and every decoder gives back each dataset exactly.");
  }
  if (writeDir) console.log(`\nReference texts written to ${writeDir}/<dataset>.toon`);
}

main();
