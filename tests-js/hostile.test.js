'use strict'
// Hostile values for every Node function of Kado, TOON, AXON and Kameo
// (issue #16): each call ends in a value or an error with a polywire `code`,
// never a crash, a hang, V8's uncoded "Maximum call stack size exceeded", or
// an N-API conversion message (code `NumberExpected` and the like). An error
// thrown by the caller's own code (a getter, toJSON, a Proxy trap, a
// replacer) is either that very error (TOON, like the reference) or the
// `cause` of a coded error (Kado, AXON, Kameo). Memory: allocation patterns
// in synchronous loops keep RSS flat (subprocesses, hostile_rss_child.js).
const test = require('node:test')
const assert = require('node:assert/strict')
const { Sentinel, throwingProxy } = require('./hostile_values.js')
const path = require('node:path')
const { spawnSync } = require('node:child_process')

const kado = require('polywire/kado')
const toon = require('polywire/toon')
const axon = require('polywire/axon')
const kameo = require('polywire/kameo')

const { TOONEncoder, TOONDecoder, FrameDecoder } = kado
const enc = new TOONEncoder()
const dec = new TOONDecoder()

const POLYWIRE_CODE = /^(KADO|TOON|JSON|KAMEO)_[A-Z0-9_]+$/
const isPolywireCode = (code) => typeof code === 'string' && (POLYWIRE_CODE.test(code) || axon.ERROR_CODES.includes(code))

// Runs `f`: a value, or an error that is coded (or the caller's own
// Sentinel, itself or as `cause`). Returns the error, if any.
function outcome(f, what) {
  try {
    f()
    return null
  } catch (e) {
    if (e instanceof Sentinel) return e
    assert.ok(e instanceof Error, `${what}: threw a non-Error ${String(e)}`)
    assert.ok(isPolywireCode(e.code), `${what}: uncoded ${e.constructor.name} (code ${e.code}): ${e.message}`)
    assert.doesNotMatch(e.message, /Failed to convert|napi value|call stack/i, what)
    return e
  }
}

function expectCode(f, code, what = code, Ctor = undefined) {
  const e = outcome(f, what)
  assert.ok(e, `${what}: no error`)
  assert.equal(e.code, code, `${what}: ${e.message}`)
  if (Ctor) assert.ok(e instanceof Ctor, `${what}: ${e.constructor.name}, expected ${Ctor.name}`)
  return e
}

function nested(depth, make) {
  let v = 1
  for (let i = 0; i < depth; i++) v = make(v)
  return v
}

const DEEP_ARRAY = nested(100000, (v) => [v])
const DEEP_OBJECT = nested(100000, (v) => ({ a: v }))
const cyclic = () => {
  const o = { a: [1, { b: null }] }
  o.a[1].b = o
  return o
}
const sparse = () => {
  const a = []
  a.length = 2 ** 32 - 1
  return a
}
// A Proxy whose traps mutate the object being walked as it is read.
const mutatingProxy = () => {
  const target = { a: 1, b: [1, 2], c: 'x' }
  let n = 0
  return new Proxy(target, {
    get(t, k, r) {
      if (n++ < 50) {
        delete t.b
        t[`k${n}`] = { n }
      }
      return Reflect.get(t, k, r)
    },
  })
}
// Getters that delete and append properties of the object being walked,
// and an array getter that truncates and grows its array.
const mutatingGetters = () => {
  const o = { first: 1 }
  Object.defineProperty(o, 'g', {
    enumerable: true,
    get() {
      delete o.first
      delete o.last
      o[`added${Object.keys(o).length}`] = [1, 2, 3]
      return { nested: true }
    },
  })
  o.last = 'z'
  const arr = [1, 2, 3, 4, 5]
  Object.defineProperty(arr, 1, {
    enumerable: true,
    get() {
      arr.length = 1
      arr.push({ x: 1 }, 'y')
      return 2
    },
  })
  o.arr = arr
  return o
}
const mutatingToJSON = () => {
  const o = { a: 1, b: { c: 2 } }
  o.b.toJSON = function () {
    delete o.a
    o.z = 'added'
    this.c = 3
    return { c: this.c, self: 'x' }
  }
  return o
}
const cyclicToJSON = () => {
  const o = { a: 1 }
  o.toJSON = () => ({ again: o })
  return o
}
const HOSTILE_VALUES = () => ({
  cycle: cyclic(),
  'deep array': DEEP_ARRAY,
  'deep object': DEEP_OBJECT,
  'sparse 2^32-1': sparse(),
  'throwing Proxy': throwingProxy(),
  'mutating Proxy': mutatingProxy(),
  'mutating getters': mutatingGetters(),
  'mutating toJSON': mutatingToJSON(),
  'cyclic toJSON': cyclicToJSON(),
  bigint: { n: 10n },
  symbol: { s: Symbol('s') },
  fn: { f() {} },
})

// Wrong types and out-of-range numbers for any parameter.
const BAD_ARGS = [NaN, -1, 1.5, 2 ** 32, 2 ** 32 + 2, 2 ** 53, -(2 ** 53), Infinity, 2n, 2n ** 64n, -1n, '1', 'x', '', {}, [], null, true, Symbol('s'), () => 1, throwingProxy()]

// ------------------------------------------------------------ every function, every parameter

const FRAME = enc.encode(1, { hello: 'world' }, 7, 1000)
const BIG_FRAME = enc.encode(3, { s: 'a'.repeat(5000) }, 7, 1000)
const SEED = Buffer.alloc(32, 9)
const LOCAL = axon.agentIdFromSeed(SEED)
const REMOTE = axon.agentIdFromSeed(Buffer.alloc(32, 3))
const REQUEST = axon.envelope(LOCAL, REMOTE, 'query', { question: 'q' }, { ts: 1000 })
const PEER = kameo.peerIdFromPublicKey(Buffer.alloc(32, 5))

// [name, function, valid arguments]: each argument in turn is replaced by
// each bad value.
const CALLS = [
  ['kado encode', (...a) => enc.encode(...a), [1, { a: 1 }, 1, 1000]],
  ['kado encodeHeader', (h) => enc.encodeHeader(h), [{ version: 1, type: 1, payloadLength: 0, sequenceId: 0, timestamp: 0 }]],
  ['kado encodeHeader field', (v, f) => enc.encodeHeader({ version: 1, type: 1, payloadLength: 0, sequenceId: 0, timestamp: 0, [f]: v }), [1, 'version']],
  ['kado encodeHeader sequenceId', (v) => enc.encodeHeader({ version: 1, type: 1, payloadLength: 0, sequenceId: v, timestamp: 0 }), [0]],
  ['kado encodeHeader payloadLength', (v) => enc.encodeHeader({ version: 1, type: 1, payloadLength: v, sequenceId: 0, timestamp: 0 }), [0]],
  ['kado encodeHeader timestamp', (v) => enc.encodeHeader({ version: 1, type: 1, payloadLength: 0, sequenceId: 0, timestamp: v }), [0]],
  ['kado encodePayload', (d) => enc.encodePayload(d), [{ a: 1 }]],
  ['kado encodeInstruction', (...a) => TOONEncoder.encodeInstruction(...a), ['do it', 1]],
  ['kado encodeToolCall', (...a) => TOONEncoder.encodeToolCall(...a), ['tool', { a: 1 }, 1]],
  ['kado encodeStatus', (...a) => TOONEncoder.encodeStatus(...a), ['ok', 0.5, 1]],
  ['kado decode', (...a) => dec.decode(...a), [BIG_FRAME, { maxSize: 1 << 20 }]],
  ['kado decodeRaw', (...a) => dec.decodeRaw(...a), [BIG_FRAME, { maxSize: 1 << 20 }]],
  ['kado decodeHeader', (b) => dec.decodeHeader(b), [FRAME]],
  ['kado decodePayload', (...a) => dec.decodePayload(...a), [BIG_FRAME.subarray(18), 3, { maxSize: 1 << 20 }]],
  ['kado validate', (b) => dec.validate(b), [FRAME]],
  ['kado compress', (b) => kado.compress(b), [Buffer.alloc(2000, 1)]],
  ['kado decompress', (...a) => kado.decompress(...a), [kado.compress(Buffer.alloc(2000, 1)), { maxSize: 4096 }]],
  ['kado decompress maxSize', (m) => kado.decompress(kado.compress(Buffer.alloc(2000, 1)), { maxSize: m }), [4096]],
  ['kado decode maxSize', (m) => dec.decode(BIG_FRAME, { maxSize: m }), [1 << 20]],
  ['kado isCompressed', (b) => kado.isCompressed(b), [FRAME]],
  ['kado FrameDecoder', (o) => new FrameDecoder(o).feed(FRAME), [{ maxFrameSize: 4096 }]],
  ['kado FrameDecoder maxFrameSize', (m) => new FrameDecoder({ maxFrameSize: m }).feed(FRAME), [4096]],
  ['kado FrameDecoder raw', (r) => new FrameDecoder({ raw: r }).feed(FRAME), [true]],
  ['kado FrameDecoder feed', (c) => new FrameDecoder().feed(c), [FRAME]],
  ['toon encode', (...a) => toon.encode(...a), [{ a: [1, 2] }, { indentSize: 2 }]],
  ['toon encode indentSize', (v) => toon.encode({ a: { b: 1 } }, { indentSize: v }), [2]],
  ['toon encode indent', (v) => toon.encode({ a: { b: 1 } }, { indent: v }), [2]],
  ['toon encode delimiter', (v) => toon.encode({ a: [1, 2] }, { delimiter: v }), [',']],
  ['toon encode keyFolding', (v) => toon.encode({ a: { b: 1 } }, { keyFolding: v }), ['safe']],
  ['toon encode flattenDepth', (v) => toon.encode({ a: { b: { c: 1 } } }, { keyFolding: 'safe', flattenDepth: v }), [2]],
  ['toon encode replacer', (v) => toon.encode({ a: 1 }, { replacer: v }), [(k, v) => v]],
  ['toon encodeLines', (...a) => [...toon.encodeLines(...a)], [{ a: [1, 2] }, { indentSize: 2 }]],
  ['toon decode', (...a) => toon.decode(...a), ['a[2]: 1,2', { indentSize: 2 }]],
  ['toon decode indentSize', (v) => toon.decode('a:\n  b: 1', { indentSize: v }), [2]],
  ['toon decode strict', (v) => toon.decode('a: 1', { strict: v }), [true]],
  ['toon decode expandPaths', (v) => toon.decode('a.b: 1', { expandPaths: v }), ['safe']],
  ['toon decodeFromLines', (...a) => toon.decodeFromLines(...a), [['a:', '  b: 1'], { indentSize: 2 }]],
  ['toon decodeStreamSync', (...a) => [...toon.decodeStreamSync(...a)], [['a:', '  b: 1'], { indentSize: 2 }]],
  ['toon escapeString', (s) => toon.escapeString(s), ['a"b']],
  ['toon rawString', (s) => toon.rawString(s), ['x']],
  ['axon decode', (...a) => axon.decode(...a), [axon.encode(REQUEST), { fillDefaults: true }]],
  ['axon encode', (e) => axon.encode(e), [REQUEST]],
  ['axon validate', (...a) => axon.validate(...a), [REQUEST, { fillDefaults: false }]],
  ['axon envelope', (...a) => axon.envelope(...a), [LOCAL, REMOTE, 'query', { question: 'q' }, { ts: 1000 }]],
  ['axon envelope ts', (ts) => axon.envelope(LOCAL, REMOTE, 'query', { question: 'q' }, { ts }), [1000]],
  ['axon envelope id', (id) => axon.envelope(LOCAL, REMOTE, 'query', { question: 'q' }, { id }), [undefined]],
  ['axon reply', (...a) => axon.reply(...a), [REQUEST, 'response', { data: 1, summary: 's' }, { ts: 1000 }]],
  ['axon reply ts', (ts) => axon.reply(REQUEST, 'response', { data: 1, summary: 's' }, { ts }), [1000]],
  ['axon errorEnvelope', (...a) => axon.errorEnvelope(...a), [REQUEST, 'internal', 'it broke', { retryable: true, ts: 1000 }]],
  ['axon errorEnvelope ts', (ts) => axon.errorEnvelope(REQUEST, 'internal', 'it broke', { ts }), [1000]],
  ['axon agentId', (k) => axon.agentId(k), [Buffer.alloc(32, 1)]],
  ['axon agentIdFromSeed', (k) => axon.agentIdFromSeed(k), [SEED]],
  ['axon publicKeyFromSeed', (k) => axon.publicKeyFromSeed(k), [SEED]],
  ['axon isAgentId', (s) => axon.isAgentId(s), [LOCAL]],
  ['axon sameAgent', (...a) => axon.sameAgent(...a), [LOCAL, LOCAL]],
  ['axon negotiate', (...a) => axon.negotiate(...a), [[1], [1]]],
  ['axon negotiate item', (v) => axon.negotiate([v], [1]), [1]],
  ['axon Session', (...a) => new axon.Session(...a), [LOCAL, { agentName: 'a' }]],
  ['axon Session options', (v, k) => new axon.Session(LOCAL, { [k]: v }), [1000, 'replayWindowMs']],
  ['axon Session replayCapacity', (v) => new axon.Session(LOCAL, { replayCapacity: v }), [10]],
  ['axon Session protocolVersions', (v) => new axon.Session(LOCAL, { protocolVersions: v }), [[1]]],
  ['axon Session hello', (...a) => new axon.Session(LOCAL).hello(...a), [REMOTE, 1000]],
  // (Before the handshake a send fails with not_authorized: coded is all that is asked.)
  ['axon Session send', (...a) => new axon.Session(LOCAL).send(...a), [REQUEST, 1000], true],
  ['axon Session receive', (...a) => new axon.Session(LOCAL).receive(...a), [axon.encode(REQUEST), 'bidirectional', 1000]],
  ['axon Session expire', (n) => new axon.Session(LOCAL).expire(n), [1000]],
  ['axon Session forget', (id) => new axon.Session(LOCAL).forget(id), ['x']],
  ['kameo encodeRequest', (v) => kameo.encodeRequest(v), [kameo.tell(1, 'a', 'm', new Uint8Array(2))]],
  ['kameo encodeResponse', (v) => kameo.encodeResponse(v), [{ Tell: { Ok: null } }]],
  ['kameo decodeRequest', (b) => kameo.decodeRequest(b), [kameo.encodeRequest(kameo.tell(1, 'a', 'm', new Uint8Array(2)))]],
  ['kameo decodeResponse', (b) => kameo.decodeResponse(b), [kameo.encodeResponse({ Tell: { Ok: null } })]],
  ['kameo encodeRegistration', (...a) => kameo.encodeRegistration(...a), [1, PEER, 'counter']],
  ['kameo decodeRegistration', (b) => kameo.decodeRegistration(b), [kameo.encodeRegistration(1, PEER, 'counter')]],
  ['kameo metadataKey', (...a) => kameo.metadataKey(...a), ['counter', PEER]],
  ['kameo parseMetadataKey', (k) => kameo.parseMetadataKey(k), [kameo.metadataKey('counter', PEER)]],
  ['kameo providerKey', (k) => kameo.providerKey(k), ['counter']],
  ['kameo peerIdFromPublicKey', (k) => kameo.peerIdFromPublicKey(k), [Buffer.alloc(32, 5)]],
  ['kameo peerIdToBytes', (p) => kameo.peerIdToBytes(p), [PEER]],
  ['kameo peerIdFromBytes', (b) => kameo.peerIdFromBytes(b), [kameo.peerIdToBytes(PEER)]],
  ['kameo actorIdToBytes', (...a) => kameo.actorIdToBytes(...a), [1, PEER]],
  ['kameo actorIdFromBytes', (b) => kameo.actorIdFromBytes(b), [kameo.actorIdToBytes(1, PEER)]],
  ['kameo remoteMessageId', (...a) => kameo.remoteMessageId(...a), ['my_crate', 1, 'my_crate::m', 'Inc', 'Counter', '']],
  ['kameo remoteActorId', (...a) => kameo.remoteActorId(...a), ['my_crate::m', 'Counter']],
  ['kameo pack', (v) => kameo.pack(v), [{ a: 1 }]],
  ['kameo unpack', (b) => kameo.unpack(b), [kameo.pack({ a: 1 })]],
  ['kameo duration', (v) => kameo.duration(v), [1.5]],
  ['kameo ask', (...a) => kameo.encodeRequest(kameo.ask(...a)), [1, 'a', 'm', new Uint8Array(2), { mailboxTimeout: 1 }]],
]

test('every function: the valid call works, each bad argument gives a value or a coded error', () => {
  const failures = []
  for (const [name, f, args, codedIsFine] of CALLS) {
    const valid = outcome(() => f(...args), `${name} (valid)`)
    if (!codedIsFine) assert.equal(valid, null, `${name}: the valid call failed`)
    for (let i = 0; i < args.length; i++) {
      for (const bad of [...BAD_ARGS, undefined]) {
        const a = args.slice()
        a[i] = bad
        let label
        try {
          label = `${name} arg ${i} = ${typeof bad === 'symbol' ? 'Symbol' : typeof bad === 'bigint' ? `${bad}n` : String(bad)}`
        } catch {
          label = `${name} arg ${i} = ${typeof bad}`
        }
        try {
          outcome(() => f(...a), label)
        } catch (e) {
          failures.push(e.message)
        }
      }
    }
  }
  assert.deepEqual(failures, [])
})

test('every encoder: cycles, 100,000-deep nesting, sparse arrays, Proxies, mutating getters and toJSON', () => {
  const encoders = {
    'kado encode': (v) => enc.encode(2, v, 1, 0),
    'kado encodePayload': (v) => enc.encodePayload(v),
    'toon encode': (v) => toon.encode(v),
    'toon encode tab': (v) => toon.encode(v, { delimiter: '\t', keyFolding: 'safe' }),
    'toon encode replacer': (v) => toon.encode(v, { replacer: (k, x) => x }),
    'toon encodeLines': (v) => [...toon.encodeLines(v)],
    'axon encode': (v) => axon.encode({ ...REQUEST, payload: { question: v } }),
    'axon envelope': (v) => axon.envelope(LOCAL, REMOTE, 'query', { question: v }),
    'kameo pack': (v) => kameo.pack(v),
    'kameo encodeRequest': (v) => kameo.encodeRequest(kameo.tell(1, 'a', 'm', v)),
  }
  for (const [name, encode] of Object.entries(encoders)) {
    for (const [what, value] of Object.entries(HOSTILE_VALUES())) {
      const t0 = Date.now()
      const e = outcome(() => encode(value), `${name}: ${what}`)
      // Fast failures: no walk of 2^32 holes, no 1.7 GB.
      assert.ok(Date.now() - t0 < 5000, `${name}: ${what} took ${Date.now() - t0} ms`)
      // The caller's own errors are theirs (TOON) or the cause (the others).
      if (what === 'throwing Proxy' && e && !(e instanceof Sentinel)) assert.ok(e.cause instanceof Sentinel, `${name}: ${e.message}`)
    }
  }
})

test('cycles and depth have their own codes, as Python has them', () => {
  expectCode(() => enc.encode(1, cyclic(), 1, 0), 'KADO_CYCLE', 'kado cycle', TypeError)
  expectCode(() => enc.encode(1, DEEP_ARRAY, 1, 0), 'KADO_TOO_DEEP', 'kado deep', RangeError)
  expectCode(() => enc.encode(1, cyclicToJSON(), 1, 0), 'KADO_TOO_DEEP', 'kado cycle through toJSON (fresh objects each call)')
  expectCode(() => enc.encode(1, sparse(), 1, 0), 'KADO_PAYLOAD_TOO_LARGE', 'kado sparse', RangeError)
  for (const opts of [undefined, { replacer: (k, v) => v }, { delimiter: '|' }]) {
    expectCode(() => toon.encode(cyclic(), opts), 'TOON_CYCLE', 'toon cycle', toon.ToonEncodeError)
    expectCode(() => toon.encode(DEEP_ARRAY, opts), 'TOON_TOO_DEEP', 'toon deep array', toon.ToonEncodeError)
    expectCode(() => toon.encode(DEEP_OBJECT, opts), 'TOON_TOO_DEEP', 'toon deep object', toon.ToonEncodeError)
    expectCode(() => toon.encode(sparse(), opts), 'TOON_TOO_LARGE', 'toon sparse', toon.ToonEncodeError)
    // A cycle only reachable past the cycle check's depth.
    const c = cyclic()
    expectCode(() => toon.encode(nested(200, (v) => ({ x: v, d: new Date(0) }))) && toon.encode({ deep: nested(100, (v) => [v]), c }, opts), 'TOON_CYCLE', 'toon deep cycle')
  }
  // A Map or Set holding itself.
  const m = new Map()
  m.set('self', m)
  expectCode(() => toon.encode(m), 'TOON_CYCLE', 'toon Map cycle')
  const s = new Set()
  s.add(s)
  expectCode(() => toon.encode(s), 'TOON_CYCLE', 'toon Set cycle')
  expectCode(() => kameo.pack(cyclic()), 'KAMEO_CYCLE', 'kameo cycle')
  expectCode(() => kameo.pack(DEEP_ARRAY), 'KAMEO_DEPTH_LIMIT', 'kameo deep')
  expectCode(() => axon.encode({ ...REQUEST, payload: cyclic() }), 'invalid_envelope', 'axon cycle')
  assert.match(outcome(() => axon.encode({ ...REQUEST, payload: cyclic() })).message, /circular/)
})

test('toon: the encoder limit and the normalisation agree at the edge of MAX_DEPTH', () => {
  for (const depth of [toon.MAX_DEPTH - 1, toon.MAX_DEPTH, toon.MAX_DEPTH + 1, toon.MAX_DEPTH + 2]) {
    for (const leaf of [1, new Date(0)]) {
      const plain = outcome(() => toon.encode(nested(depth, (v) => [v]), {}), 'plain')
      const normalised = outcome(() => toon.encode(nested(depth, (v) => [v, leaf]), {}), 'normalised')
      assert.equal(plain?.code, normalised?.code, `depth ${depth}`)
    }
    // (The replacer route copies the path at each level: about 1 s a call here.)
    if (depth >= toon.MAX_DEPTH) {
      const plain = outcome(() => toon.encode(nested(depth, (v) => [v]), {}), 'plain')
      const replaced = outcome(() => toon.encode(nested(depth, (v) => [v]), { replacer: (k, v) => v }), 'replacer')
      assert.equal(plain?.code, replaced?.code, `depth ${depth}`)
    }
  }
})

test('toon replacers that mutate, re-enter encode, or nest without end', () => {
  const value = { a: { b: [1, 2, { c: 3 }] }, d: 'x' }
  // Mutates the value being walked.
  outcome(
    () =>
      toon.encode(value, {
        replacer(key, v) {
          if (key === 'a') {
            delete value.d
            value.e = { f: 1 }
          }
          if (Array.isArray(v)) v.push(99)
          return v
        },
      }),
    'mutating replacer',
  )
  // Re-enters encode (and decode) at every call.
  const text = toon.encode(
    { a: [1, 2], b: { c: 'x' } },
    {
      replacer(key, v) {
        toon.decode(toon.encode({ inner: [key, 1, 2] }))
        return v
      },
    },
  )
  assert.equal(text, toon.encode({ a: [1, 2], b: { c: 'x' } }))
  // Answers each value with a new container: nesting without end.
  expectCode(() => toon.encode({ a: 1 }, { replacer: (k, v) => ({ v }) }), 'TOON_TOO_DEEP', 'replacer nesting')
  // Answers with a cyclic value.
  expectCode(() => toon.encode({ a: 1 }, { replacer: (k, v) => (k === 'a' ? cyclic() : v) }), 'TOON_CYCLE', 'replacer cycle')
  // Throws: the caller's own error, as the reference.
  assert.throws(() => toon.encode({ a: 1 }, { replacer: () => { throw new Sentinel('r') } }), Sentinel)
  // Getters of the packed route that encode again take the JSON route.
  const g = { x: 1 }
  Object.defineProperty(g, 'y', { enumerable: true, get: () => toon.encode({ inner: [1, 2, 3], k: { z: 1 } }) })
  assert.equal(toon.decode(toon.encode(g)).y, toon.encode({ inner: [1, 2, 3], k: { z: 1 } }))
})

test('kado: numbers are never wrapped, truncated or converted', () => {
  for (const t of [NaN, 1.5, '2', 2n, null, {}]) expectCode(() => enc.encode(t, {}, 1, 0), 'KADO_INVALID_ARGUMENT', `type ${String(t)}`)
  for (const t of [-1, 0, 9, 2 ** 32 + 2]) expectCode(() => enc.encode(t, {}, 1, 0), 'KADO_UNKNOWN_TYPE', `type ${t}`)
  for (const s of [-1, 2 ** 32, NaN, 1.5, Infinity]) expectCode(() => enc.encode(1, {}, s, 0), 'KADO_INVALID_ARGUMENT', `seq ${s}`, RangeError)
  for (const s of ['1', 1n, null, undefined]) expectCode(() => enc.encode(1, {}, s, 0), 'KADO_INVALID_ARGUMENT', `seq ${String(s)}`, TypeError)
  for (const ts of [2 ** 53, -1, 1.5, NaN]) expectCode(() => enc.encode(1, {}, 1, ts), 'KADO_INVALID_ARGUMENT', `ts ${ts}`, RangeError)
  for (const ts of [2n ** 64n, -1n]) expectCode(() => enc.encode(1, {}, 1, ts), 'KADO_INVALID_ARGUMENT', `ts ${ts}n`, RangeError)
  expectCode(() => enc.encode(1, {}, 1, '5'), 'KADO_INVALID_ARGUMENT', 'ts string', TypeError)
  // The limits themselves are fine.
  const h = dec.decode(enc.encode(8, {}, 2 ** 32 - 1, 2 ** 53 - 1)).header
  assert.deepEqual([h.type, h.sequenceId, h.timestamp], [8, 2 ** 32 - 1, 2 ** 53 - 1])
  assert.equal(dec.decodeHeader(enc.encode(1, {}, 0, 2n ** 64n - 1n)).timestamp, 2 ** 64)
  expectCode(() => enc.encodeHeader({ version: 1, type: 1, payloadLength: 2 ** 32, sequenceId: 0, timestamp: 0 }), 'KADO_INVALID_ARGUMENT', 'payloadLength 2^32')
  expectCode(() => new FrameDecoder({ maxFrameSize: 17 }), 'KADO_INVALID_ARGUMENT', 'maxFrameSize 17', RangeError)
  expectCode(() => new FrameDecoder({ maxFrameSize: '4096' }), 'KADO_INVALID_ARGUMENT', 'maxFrameSize string', TypeError)
})

// `FF 61 FF` repeated: 255 bytes of 'a' per 3 bytes in.
function bombPayload(outBytes) {
  const runs = Math.ceil(outBytes / 255)
  const b = Buffer.alloc(1 + 3 * runs)
  b[0] = kado.MAGIC_COMPRESSED
  for (let i = 0; i < runs; i++) b.set([0xff, 0x61, 0xff], 1 + 3 * i)
  return b
}

function bombFrame(outBytes) {
  const payload = bombPayload(outBytes)
  return Buffer.concat([enc.encodeHeader({ version: 1, type: 3, payloadLength: payload.length, sequenceId: 1, timestamp: 0 }), payload])
}

test('decompression bombs: every decompressing call stops at 16 MiB, or at maxSize', () => {
  const huge = bombFrame(64 * 2 ** 20) // 0.75 MB in, 64 MiB out
  const calls = {
    decode: (o) => dec.decode(huge, o),
    decodeRaw: (o) => dec.decodeRaw(huge, o),
    decodePayload: (o) => dec.decodePayload(huge.subarray(kado.HEADER_SIZE), 3, o),
    decompress: (o) => kado.decompress(huge.subarray(kado.HEADER_SIZE), o),
    FrameDecoder: (o) => new FrameDecoder({ raw: true, maxFrameSize: o?.maxSize ?? kado.DEFAULT_MAX_FRAME_SIZE }).feed(huge),
  }
  for (const [name, call] of Object.entries(calls)) {
    const e = expectCode(() => call(undefined), 'KADO_FRAME_TOO_LARGE', `${name} default`)
    assert.match(e.message, /16777216/)
    expectCode(() => call({ maxSize: 1000 }), 'KADO_FRAME_TOO_LARGE', `${name} maxSize 1000`)
  }
  // Under the bound it decodes; a custom bound above the default is honoured.
  const small = bombFrame(5000)
  assert.equal(dec.decodeRaw(small, { maxSize: 5100 }).payload.length, 255 * 20)
  expectCode(() => dec.decodeRaw(small, { maxSize: 5099 }), 'KADO_FRAME_TOO_LARGE', 'just under')
  assert.equal(dec.decodeRaw(bombFrame(20 * 2 ** 20), { maxSize: 32 * 2 ** 20 }).payload.length, Math.ceil((20 * 2 ** 20) / 255) * 255)
  // maxSize is validated.
  for (const m of [-1, 1.5, NaN, '10', 10n, null, {}]) {
    expectCode(() => kado.decompress(small.subarray(18), { maxSize: m }), 'KADO_INVALID_ARGUMENT', `maxSize ${String(m)}`)
    expectCode(() => dec.decode(small, { maxSize: m }), 'KADO_INVALID_ARGUMENT', `decode maxSize ${String(m)}`)
  }
  expectCode(() => dec.decode(small, 5), 'KADO_INVALID_ARGUMENT', 'options not an object', TypeError)
})

test('a backslash as the last byte of a payload: a coded error, not a Rust panic (found by fast-check)', () => {
  // The core's structural pre-scan sliced one past the end: the panic
  // aborted the Node process.
  for (const text of ['"abc\\', '["\\', '{"a":"\\']) {
    const payload = Buffer.from(text)
    expectCode(() => dec.decodePayload(payload), 'KADO_INVALID_JSON', `decodePayload ${text}`)
    const frame = Buffer.concat([enc.encodeHeader({ version: 1, type: 1, payloadLength: payload.length, sequenceId: 0, timestamp: 0 }), payload])
    expectCode(() => dec.decode(frame), 'KADO_INVALID_JSON', `decode ${text}`)
    expectCode(() => new FrameDecoder().feed(frame), 'KADO_INVALID_JSON', `FrameDecoder ${text}`)
  }
})

test('kameo: numbers beyond 2^53 are packed as the doubles they are (found by fast-check)', () => {
  // JSON.stringify writes 2^60 as 1152921504606847000: packed as that, the
  // value changed; -2^63 (in MessagePack's range) was refused.
  for (const [n, big] of [[2 ** 60, 2n ** 60n], [2 ** 63, 2n ** 63n], [-(2 ** 63), -(2n ** 63n)], [-(2 ** 60) - 2 ** 10, -(2n ** 60n) - 1024n], [2 ** 64 - 2 ** 11, 2n ** 64n - 2048n]]) {
    assert.equal(kameo.unpack(kameo.pack(n)), big, String(n))
    assert.deepEqual(kameo.pack(n), kameo.pack(big), String(n))
  }
  // Beyond MessagePack's integers: the float it is, whether JSON.stringify
  // writes it with digits (1e20) or an exponent (1e21); it used to be refused.
  for (const n of [2 ** 64, -(2 ** 63) - 2 ** 11, 1e20, -1e21]) assert.equal(kameo.unpack(kameo.pack(n)), n)
  assert.deepEqual(kameo.decodeRegistration(kameo.encodeRegistration(2 ** 60, null, 'x')).sequence_id, 2n ** 60n)
})

test('FrameDecoder keeps its state in JavaScript: chunks, errors, positions', () => {
  const frames = [enc.encode(1, { a: 1 }, 1, 5), enc.encode(3, { s: 'b'.repeat(3000) }, 2, 6), enc.encode(4, [1, 2], 3, 7)]
  const stream = Buffer.concat(frames)
  for (const size of [1, 7, 18, 100, stream.length]) {
    const fd = new FrameDecoder()
    const out = []
    for (let i = 0; i < stream.length; i += size) {
      const chunk = Buffer.from(stream.subarray(i, i + size))
      out.push(...fd.feed(chunk))
      chunk.fill(0) // the decoder must have copied what it keeps
    }
    fd.finish()
    assert.deepEqual(out.map((m) => m.header.sequenceId), [1, 2, 3])
    assert.equal(out[1].payload.s.length, 3000)
    assert.equal(fd.position, stream.length)
    assert.equal(fd.buffered, 0)
  }
  // An error after a good frame: the frame, then the error, sticky; offsets in the stream.
  const bad = Buffer.from(frames[2])
  bad[1] = 99
  const fd = new FrameDecoder()
  assert.equal(fd.feed(Buffer.concat([frames[0], bad])).length, 1)
  const e = expectCode(() => fd.feed(frames[0]), 'KADO_UNKNOWN_TYPE')
  assert.equal(e.offset, frames[0].length + 1)
  assert.throws(() => fd.finish(), (x) => x === e)
  // Truncation at the end.
  const t = new FrameDecoder()
  t.feed(frames[1].subarray(0, 30))
  assert.equal(t.buffered, 30)
  expectCode(() => t.finish(), 'KADO_TRUNCATED_PAYLOAD')
  const h = new FrameDecoder()
  h.feed(frames[1].subarray(0, 5))
  expectCode(() => h.finish(), 'KADO_TRUNCATED_HEADER')
})

test('toon: hostile options and decoder inputs', () => {
  for (const bad of [5, 'x', 2n, Symbol('o')]) {
    expectCode(() => toon.encode({ a: 1 }, bad), 'TOON_INVALID_ARGUMENT', `encode options ${typeof bad}`, TypeError)
    expectCode(() => toon.decode('a: 1', bad), 'TOON_INVALID_ARGUMENT', `decode options ${typeof bad}`, TypeError)
  }
  for (const bad of [1.5, -1, 2 ** 32, NaN, 257]) expectCode(() => toon.encode({ a: 1 }, { indentSize: bad }), 'TOON_INVALID_ARGUMENT', `indentSize ${bad}`, RangeError)
  for (const bad of [2n, '2', {}]) expectCode(() => toon.encode({ a: 1 }, { indentSize: bad }), 'TOON_INVALID_ARGUMENT', `indentSize ${typeof bad}`, TypeError)
  for (const bad of [0, 2 ** 31, 2 ** 32 + 2, 1.5]) expectCode(() => toon.decode('a: 1', { indentSize: bad }), 'TOON_INVALID_ARGUMENT', `decode indentSize ${bad}`, RangeError)
  for (const bad of [2n, -1, NaN, '1']) expectCode(() => toon.encode({ a: { b: 1 } }, { keyFolding: 'safe', flattenDepth: bad }), 'TOON_INVALID_ARGUMENT', `flattenDepth ${String(bad)}`)
  for (const bad of [5, null, {}, [], Buffer.from('a: 1')]) expectCode(() => toon.decode(bad), 'TOON_INVALID_ARGUMENT', `decode ${typeof bad}`, TypeError)
  // Deep text: coded, never the stack.
  for (const text of ['- '.repeat(5000) + '1', Array.from({ length: 3000 }, (_, i) => ' '.repeat(2 * i) + 'k:').join('\n'), '['.repeat(5000)]) {
    outcome(() => toon.decode(text), 'deep text')
    outcome(() => [...toon.decodeStreamSync(text.split('\n'))], 'deep text events')
  }
  // Line sources that throw or mutate.
  const lines = ['a:', '  b: 1']
  outcome(() => toon.decodeFromLines({ [Symbol.iterator]: () => ({ next: () => { throw new Sentinel('it') } }) }), 'throwing lines')
  outcome(
    () =>
      toon.decodeFromLines(
        (function* () {
          for (const l of lines) {
            lines.push('  c: 2')
            if (lines.length > 50) return
            yield l
          }
        })(),
      ),
    'growing lines',
  )
})

test('toon: fresh instances share one key table and stay consistent', () => {
  const file = require.resolve('polywire/toon')
  const instances = []
  for (let i = 0; i < 4; i++) {
    delete require.cache[file]
    instances.push(require(file))
  }
  delete require.cache[file]
  require(file)
  const docs = [0, 1, 2, 3].map((i) => ({ rows: [{ [`k${i}`]: i, shared: 'x' }, { [`k${i}`]: i + 1, shared: 'y' }], [`top${i}`]: { a: i } }))
  // Interleaved: each call finds the table following another instance.
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < instances.length; i++) {
      const t = instances[i]
      const text = t.encode(docs[i])
      assert.equal(text, toon.encode(docs[i]))
      assert.deepEqual(t.decode(text), docs[i])
      assert.deepEqual(instances[(i + 1) % 4].decode(text), docs[i])
    }
  }
})

// ------------------------------------------------------------ memory

const CHILD = path.join(__dirname, 'hostile_rss_child.js')

function rssGrowth(pattern, count) {
  const r = spawnSync(process.execPath, ['--expose-gc', CHILD, pattern, String(count)], { encoding: 'utf8', timeout: 120000 })
  assert.equal(r.status, 0, r.stderr)
  return JSON.parse(r.stdout)
}

// Before the fix (RSS growth in MB, same patterns): frame-decoder 80 at
// 200,000 (40 at 100,000), kameo-pack 101 at 200,000 (50 at 100,000),
// kado-buffers 2,187 at 200,000 (546 at 50,000), toon-instance 83 at 1,000
// (25 at 400; after as many to warm up). After: 0 to 6. The child compares
// the medians of RSS samples count steps apart (see hostile_rss_child.js):
// one sample before and one after swung by up to 16 MB with no leak.
for (const [pattern, count, limitMb] of [
  ['frame-decoder', 100000, 20],
  ['kameo-pack', 100000, 20],
  ['kado-buffers', 50000, 30],
  ['toon-instance', 400, 15],
]) {
  test(`RSS stays flat: ${pattern} x ${count} in a synchronous loop`, () => {
    const r = rssGrowth(pattern, count)
    assert.ok(r.growth < limitMb, `${pattern}: RSS grew ${r.growth} MB (${r.before} -> ${r.after})`)
  })
}
