'use strict'
// Hostile inputs for polywire/tether (issue #16): deep nesting both ways,
// cycles, sparse arrays with huge lengths, Proxies and getters that mutate,
// wrong parameter types, the quadratic-decode case and native memory in a
// synchronous loop. Every case ends in a value or a typed error.

const test = require('node:test')
const assert = require('node:assert/strict')
const { spawnSync } = require('node:child_process')
const tether = require('polywire/tether')
const { TetherError } = tether

const LEVELS = 1_000_000

function codeOf(f) {
  try {
    f()
  } catch (e) {
    assert.ok(e instanceof Error, `threw a non-Error: ${String(e)}`)
    assert.equal(typeof e.code, 'string', `untyped error: ${e && e.stack}`)
    return e.code
  }
  return null
}

// Returns or throws a TetherError/TypeError with a code, nothing else.
function typedOutcome(f) {
  try {
    return { value: f() }
  } catch (e) {
    assert.ok(e instanceof TetherError || e instanceof TypeError || e instanceof RangeError, `unexpected ${e && e.stack}`)
    return { error: e }
  }
}

function nestedBytes(levels, inner) {
  const b = Buffer.alloc(levels * 8 + inner.length)
  for (let i = 0; i < levels; i++) {
    b.writeUInt32BE(0x20000008, 8 * i)
    b.writeUInt32BE(1, 8 * i + 4)
  }
  Buffer.from(inner).copy(b, levels * 8)
  return b
}

function nestedArray(levels, inner) {
  let v = inner
  for (let i = 0; i < levels; i++) v = [v]
  return v
}

function depthOf(v) {
  let d = 0
  while (Array.isArray(v)) {
    d++
    v = v[0]
  }
  return d
}

test('1,000,000 levels decode and encode with a raised maxDepth', () => {
  const bytes = nestedBytes(LEVELS, [0x40, 0, 0, 7])
  const v = tether.decode(bytes, { maxDepth: LEVELS })
  assert.equal(depthOf(v), LEVELS)
  assert.ok(tether.encode(v, { maxDepth: LEVELS }).equals(bytes))
  assert.equal(codeOf(() => tether.decode(bytes, { maxDepth: LEVELS - 1 })), 'TETHER_TOO_DEEP')
  assert.equal(codeOf(() => tether.encode(v, { maxDepth: LEVELS - 1 })), 'TETHER_TOO_DEEP')
  assert.equal(codeOf(() => tether.decode(bytes)), 'TETHER_TOO_DEEP')
  assert.equal(codeOf(() => tether.encode(v)), 'TETHER_TOO_DEEP')
  // A deep value built in JS, not by decode.
  const w = nestedArray(LEVELS, null)
  const enc = tether.encode(w, { maxDepth: LEVELS })
  assert.equal(enc.length, LEVELS * 8 + 4)
  // The typed notation helpers are iterative too.
  const typed = tether.toTyped(w, LEVELS)
  assert.equal(depthOf(tether.fromTyped(typed)), LEVELS)
})

test('1,000,000 levels through the frame and hex helpers', () => {
  const o = { maxDepth: LEVELS + 1 }
  const answer = Buffer.concat([Buffer.from([0x20, 0, 0, 0x1d]), nestedBytes(LEVELS, [0x20, 0, 0, 3])])
  const a = tether.decodeAnswer(answer, o)
  assert.equal(a.uuid, null)
  assert.equal(depthOf(a.result), LEVELS)
  assert.ok(tether.encodeAnswer(a.result, o).equals(answer))
  const send = tether.encodeMessageSend(3, 'x:', [nestedArray(LEVELS - 1, 1)], o)
  const m = tether.decodeMessageSend(send, o)
  assert.equal(depthOf(m.arguments[0]), LEVELS - 1)
  assert.equal(depthOf(tether.decodeResultHex(tether.toHex(answer), o)), LEVELS)
  assert.equal(depthOf(tether.readToolResult({ result: tether.toHex(answer) }, o)), LEVELS)
  const t = tether.toolArguments(nestedArray(1000, 1), 'y', [], { maxDepth: 1000 })
  assert.equal(t.receiver.length, 1000 * 16 + 8)
  assert.equal(codeOf(() => tether.toolArguments(nestedArray(1000, 1), 'y', [])), 'TETHER_TOO_DEEP')
})

test('cycles are TETHER_CYCLE; shared sub-arrays are fine', () => {
  const a = []
  a.push(a)
  assert.equal(codeOf(() => tether.encode(a, { maxDepth: 1e6 })), 'TETHER_CYCLE')
  const b = [1]
  const c = [b]
  b.push([2, c])
  assert.equal(codeOf(() => tether.encode(c)), 'TETHER_CYCLE')
  assert.equal(codeOf(() => tether.encodeMessageSend(1, 'x', [c])), 'TETHER_CYCLE')
  assert.equal(codeOf(() => tether.toTyped(c)), 'TETHER_CYCLE')
  const shared = [1, 2]
  assert.deepStrictEqual(tether.decode(tether.encode([shared, shared, [shared]])), [[1, 2], [1, 2], [[1, 2]]])
})

test('sparse arrays and huge lengths fail fast', () => {
  for (const len of [2 ** 32 - 1, 1e9, 4]) {
    const a = [1, 2]
    a.length = len
    const t0 = process.hrtime.bigint()
    assert.equal(codeOf(() => tether.encode(a)), 'TETHER_SPARSE_ARRAY')
    assert.ok(Number(process.hrtime.bigint() - t0) < 2e9, 'fails fast (no walk of the holes)')
  }
  const huge = []
  huge.length = 2 ** 32 - 1
  assert.equal(codeOf(() => tether.encode([[huge]])), 'TETHER_SPARSE_ARRAY')
  assert.equal(codeOf(() => tether.encode([1, , 3])), 'TETHER_SPARSE_ARRAY') // eslint-disable-line no-sparse-arrays
  assert.equal(codeOf(() => tether.encodeAnswer(huge)), 'TETHER_SPARSE_ARRAY')
  assert.equal(codeOf(() => tether.toolArguments(1, 'x', huge)), 'TETHER_SPARSE_ARRAY')
  // undefined present (not a hole) is an unsupported value, as before.
  assert.equal(codeOf(() => tether.encode([undefined])), 'TETHER_UNSUPPORTED_TYPE')
})

test('Proxies and getters: values, user errors, or TETHER_MUTATED', () => {
  assert.deepStrictEqual(tether.decode(tether.encode(new Proxy([1, [2]], {}))), [1, [2]])
  // A trap that throws: the caller's own error comes through unchanged.
  const boom = new Proxy([1], { get(t, k) { if (k === '0') throw new RangeError('trap'); return Reflect.get(t, k) } })
  assert.throws(() => tether.encode(boom), { name: 'RangeError', message: 'trap' })
  // A Proxy whose length lies about huge contents.
  const liar = new Proxy([], { get(t, k) { return k === 'length' ? 2 ** 32 - 1 : Reflect.get(t, k) } })
  assert.equal(codeOf(() => tether.encode(liar)), 'TETHER_SPARSE_ARRAY')
  // Every index "present", then the length shrinks under the walk.
  let reads = 0
  const shrinking = new Proxy([], {
    get(t, k) { if (k === 'length') return reads > 3 ? 1 : 10; reads++; return 0 },
    has() { return true },
  })
  assert.equal(codeOf(() => tether.encode(shrinking)), 'TETHER_MUTATED')
  // A getter that empties its own array.
  const arr = [1, 2, 3]
  Object.defineProperty(arr, 0, { get() { arr.length = 0; return 1 }, configurable: true, enumerable: true })
  assert.equal(codeOf(() => tether.encode(arr)), 'TETHER_MUTATED')
  // A getter that grows an enclosing array.
  const outer = [0]
  const inner = [1]
  Object.defineProperty(inner, 0, { get() { outer.push(9); return 1 }, configurable: true })
  outer.push(inner)
  assert.equal(codeOf(() => tether.encode(outer)), 'TETHER_MUTATED')
  // A getter that replaces a later element: that is just the value read.
  const swap = [1, 2]
  Object.defineProperty(swap, 0, { get() { swap[1] = 'x'; return 1 }, configurable: true })
  assert.deepStrictEqual(tether.decode(tether.encode(swap)), [1, 'x'])
  // Getters on the special classes' look-alikes are not trusted.
  assert.equal(codeOf(() => tether.encode({ name: 'x' })), 'TETHER_UNSUPPORTED_TYPE')
  assert.equal(codeOf(() => tether.encode(Symbol('s'))), 'TETHER_UNSUPPORTED_TYPE')
  assert.equal(codeOf(() => tether.encode(() => 1)), 'TETHER_UNSUPPORTED_TYPE')
  assert.equal(codeOf(() => tether.encode(new Proxy({}, {}))), 'TETHER_UNSUPPORTED_TYPE')
})

test('wrong types for every public function', () => {
  const good = tether.encode([1])
  const bad = [undefined, null, 5, -1, 2 ** 64, NaN, 'x', {}, [], Symbol('s'), 1n, () => 1, new Proxy({}, {})]
  const opts = [...bad.map((maxDepth) => ({ maxDepth })), ...bad.filter((x) => x !== undefined && x !== null)]
  const calls = [
    (x) => tether.encode(x),
    (x) => tether.decode(x),
    (x) => tether.encodeMessageSend(x, 'a', []),
    (x) => tether.encodeMessageSend(1, x, []),
    (x) => tether.encodeMessageSend(1, 'a', x),
    (x) => tether.encodeMessageSend(1, 'a', [], { uuid: x }),
    (x) => tether.decodeMessageSend(x),
    (x) => tether.encodeAnswer(x),
    (x) => tether.encodeAnswer(1, { uuid: x }),
    (x) => tether.decodeAnswer(x),
    (x) => tether.encodeHandshake(x),
    (x) => tether.decodeHandshake(x),
    (x) => tether.toHex(x),
    (x) => tether.fromHex(x),
    (x) => tether.fromHex('40000003', x),
    (x) => tether.toolArguments(x, 'a', []),
    (x) => tether.toolArguments(1, x, []),
    (x) => tether.toolArguments(1, 'a', x),
    (x) => tether.decodeResultHex(x),
    (x) => tether.readToolResult(x),
    (x) => tether.toTyped(x),
    (x) => tether.fromTyped(x),
    (x) => new tether.TetherSymbol(x),
    (x) => new tether.TetherProxy(x),
    (x) => new tether.TetherUuid(x),
  ]
  for (const call of calls) for (const x of bad) typedOutcome(() => call(x))
  const withOptions = [
    (o) => tether.encode([1], o),
    (o) => tether.decode(good, o),
    (o) => tether.encodeMessageSend(1, 'a', [], o),
    (o) => tether.decodeMessageSend(tether.encodeMessageSend(1, 'a', []), o),
    (o) => tether.encodeAnswer(1, o),
    (o) => tether.decodeAnswer(tether.encodeAnswer(1), o),
    (o) => tether.toolArguments(1, 'a', [], o),
    (o) => tether.decodeResultHex('40000007', o),
    (o) => tether.readToolResult('{"result":"40000007"}', o),
  ]
  for (const call of withOptions) {
    for (const o of opts) typedOutcome(() => call(o))
    for (const maxDepth of [-1, 2 ** 32, 2 ** 64, 1.5, NaN, Infinity, '5', 5n]) {
      assert.equal(codeOf(() => call({ maxDepth })), 'TETHER_INVALID_OPTION', `maxDepth ${String(maxDepth)}`)
    }
    assert.equal(codeOf(() => call('x')), 'TETHER_INVALID_OPTION')
  }
  assert.equal(codeOf(() => tether.encodeHandshake('1')), 'TETHER_UNSUPPORTED_TYPE')
  assert.equal(codeOf(() => tether.encodeHandshake(-1)), 'TETHER_EXPOSURE_HASH_RANGE')
  assert.equal(codeOf(() => tether.toolArguments(1, 5, [])), 'TETHER_UNSUPPORTED_TYPE')
  assert.equal(codeOf(() => tether.readToolResult({ result: [1] })), 'TETHER_BAD_TOOL_RESULT')
  assert.throws(() => tether.decode('40000003'), TypeError)
  assert.equal(codeOf(() => tether.encode(2 ** 60)), 'TETHER_INTEGER_RANGE')
  assert.equal(codeOf(() => tether.encode(-(2 ** 60))), 'TETHER_INTEGER_RANGE')
  assert.equal(codeOf(() => tether.encode(['\udc00'])), 'TETHER_UNENCODABLE_CHARACTER')
  assert.equal(codeOf(() => tether.encode(new tether.TetherSymbol('\ud800x'))), 'TETHER_UNENCODABLE_CHARACTER')
})

// A `depth`-deep chain of one-element Arrays around an Array of `n` nils.
function chain(depth, n) {
  const inner = Buffer.alloc(8 + 4 * n)
  inner.writeUInt32BE(0x20000008, 0)
  inner.writeUInt32BE(n, 4)
  for (let i = 0; i < n; i++) inner.writeUInt32BE(0x20000003, 8 + 4 * i)
  return Buffer.concat([nestedBytes(depth, []), inner])
}

function bestMs(f, runs = 3) {
  let best = Infinity
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint()
    f()
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / 1e6)
  }
  return best
}

test('decode is linear: a 255-deep chain around 250,000 nils (1 MB), then 2,500,000 (10 MB)', () => {
  const o = { maxDepth: 256 }
  const mb = chain(255, 250_000)
  const ms = bestMs(() => tether.decode(mb, o))
  // Absolute bounds 10x above the quadratic decoder's 1 MB time would be
  // flaky on a loaded machine; these only catch a return of the 40 s walk.
  assert.ok(ms < 5000, `1 MB decode took ${ms} ms`)
  const answer = Buffer.concat([Buffer.from([0x20, 0, 0, 0x1d]), mb])
  assert.ok(bestMs(() => tether.decodeAnswer(answer, o)) < 5000)
  assert.ok(bestMs(() => tether.decodeResultHex(tether.toHex(answer), o)) < 10000)
  const v = tether.decode(mb, o)
  assert.ok(bestMs(() => tether.encode(v, o)) < 5000)
  // 1 MB -> 10 MB: ten times the input, at most 50 times the time: linear
  // with a margin for a busy machine and for the garbage collector, which
  // 2.5 million values keep busy. The 1 MB time is floored at 50 ms, as in
  // the Python twin (tests-py/test_hostile_tether.py): against the 8 ms it
  // takes, a fresh-clone CI run beside a build measured 55 times (459 ms),
  // where 31 times had been the most. A quadratic walk takes minutes at
  // 10 MB (the old decoder took 5.6 s for 100 KB and 40 s for 1 MB), far
  // beyond 50 x 50 ms.
  const tSmall = Math.max(ms, 50)
  const large = chain(255, 2_500_000)
  const tLarge = bestMs(() => tether.decode(large, o), 3)
  assert.ok(tLarge < 50 * tSmall, `1 MB: ${tSmall} ms, 10 MB: ${tLarge} ms`)
  const send = Buffer.concat([tether.encodeMessageSend(1, 'x', []).subarray(0, -8), Buffer.from([0x20, 0, 0, 8, 0, 0, 0, 1]), mb])
  assert.ok(bestMs(() => tether.decodeMessageSend(send, { maxDepth: 257 })) < 5000)
})

test('RSS stays flat over 300,000 synchronous encodes', () => {
  const script = `
    const t = require(${JSON.stringify(require.resolve('polywire/tether'))})
    const v = [1, 'hello', [2, 3], new Uint8Array(64)]
    for (let i = 0; i < 20000; i++) t.encode(v)
    globalThis.gc()
    const before = process.memoryUsage().rss
    for (let i = 0; i < 300000; i++) {
      t.encode(v)
      if (i % 3 === 0) t.encodeAnswer(v)
      if (i % 5 === 0) t.fromHex('4000000340000004')
    }
    globalThis.gc()
    process.stdout.write(JSON.stringify({ before, after: process.memoryUsage().rss }))
  `
  const r = spawnSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
  const { before, after } = JSON.parse(r.stdout)
  const grew = (after - before) / 2 ** 20
  assert.ok(grew < 48, `RSS grew ${grew.toFixed(1)} MiB over the loop`)
})
