'use strict'
// polywire/kameo against the shared vectors (bytes written, and verdicts
// given, by the real kameo 0.22.2 crate in kameo-parity), plus the Node API's
// own behaviour: BigInts, Uint8Arrays, Maps, helpers and typed errors.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')

const kameo = require('polywire/kameo')
const { KameoError, PolywireError } = kameo

const V = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'vectors', 'kameo.json'), 'utf8'))
const hex = (s) => Buffer.from(s, 'hex')

// The JSON form of values in vectors/kameo.json -> JavaScript values.
function fromJson(j) {
  if (Array.isArray(j)) return j.map(fromJson)
  if (j !== null && typeof j === 'object') {
    const keys = Object.keys(j)
    if (keys.length === 1) {
      const v = j[keys[0]]
      switch (keys[0]) {
        case '$int': {
          const n = BigInt(v)
          return n >= -9007199254740991n && n <= 9007199254740991n ? Number(n) : n
        }
        case '$bytes':
          return hex(v)
        case '$f64':
        case '$f32':
          return v
        case '$map':
          return new Map(v.map(([k, x]) => [fromJson(k), fromJson(x)]))
      }
    }
    const out = {}
    for (const k of keys) out[k] = fromJson(j[k])
    return out
  }
  return j
}

// JavaScript numbers cannot tell 2.0 from 2, nor f32 from f64.
function packsExactly(j) {
  if (Array.isArray(j)) return j.every(packsExactly)
  if (j !== null && typeof j === 'object') {
    if ('$f32' in j) return false
    if ('$f64' in j) return !Number.isInteger(j.$f64)
    return Object.values(j).every(packsExactly)
  }
  return true
}

function expectKameoError(fn, code) {
  assert.throws(fn, (e) => {
    assert.ok(e instanceof KameoError, `expected KameoError, got ${e}`)
    assert.ok(e instanceof PolywireError)
    assert.equal(e.code, code)
    return true
  })
}

test('header and constants', () => {
  assert.equal(V.format, 'kameo')
  assert.match(V.how, /kameo/)
  assert.equal(kameo.MESSAGING_PROTOCOL, V.messaging_protocol)
  assert.equal(kameo.REGISTRY_PROTOCOL, V.registry_protocol)
  assert.equal(kameo.MAX_REQUEST_SIZE, 1 << 20)
  assert.equal(kameo.MAX_DEPTH, 256)
})

for (const vec of V.requests) {
  test(`request ${vec.name} is byte-identical to kameo`, () => {
    const value = fromJson(vec.value)
    assert.equal(kameo.encodeRequest(value).toString('hex'), vec.hex)
    assert.deepEqual(kameo.decodeRequest(hex(vec.hex)), value)
  })
}

for (const vec of V.responses) {
  test(`response ${vec.name} is byte-identical to kameo`, () => {
    const value = fromJson(vec.value)
    assert.equal(kameo.encodeResponse(value).toString('hex'), vec.hex)
    assert.deepEqual(kameo.decodeResponse(hex(vec.hex)), value)
  })
}

for (const vec of V.decode) {
  test(`decode ${vec.name}: kameo says ${vec.kameo}`, () => {
    const data = hex(vec.hex)
    const [decode, encode] =
      vec.kind === 'request' ? [kameo.decodeRequest, kameo.encodeRequest] : [kameo.decodeResponse, kameo.encodeResponse]
    if (vec.kameo === 'ok') {
      const value = decode(data)
      if ('value' in vec) assert.deepEqual(value, fromJson(vec.value))
      assert.equal(encode(value).toString('hex'), vec.canonical_hex)
    } else {
      expectKameoError(() => decode(data), vec.error)
    }
  })
}

test('registrations', () => {
  for (const vec of V.registrations) {
    const seq = fromJson(vec.sequence_id)
    const data = kameo.encodeRegistration(seq, vec.peer_id, vec.remote_id)
    assert.equal(data.toString('hex'), vec.hex, vec.name)
    assert.deepEqual(kameo.decodeRegistration(data), { sequence_id: seq, peer_id: vec.peer_id, remote_id: vec.remote_id })
  }
  for (const vec of V.registration_decode) {
    const data = hex(vec.hex)
    if (vec.kameo === 'ok') {
      assert.deepEqual(kameo.decodeRegistration(data), {
        sequence_id: fromJson(vec.sequence_id),
        peer_id: vec.peer_id,
        remote_id: vec.remote_id,
      })
    } else {
      expectKameoError(() => kameo.decodeRegistration(data), vec.error)
    }
  }
})

test('peer ids', () => {
  for (const vec of V.peer_ids) {
    if (vec.ed25519_public_key) {
      const key = hex(vec.ed25519_public_key)
      assert.equal(kameo.peerIdFromPublicKey(key), vec.base58)
      assert.equal(kameo.peerIdFromPublicKey(Buffer.concat([hex('08011220'), key])), vec.base58)
      assert.equal(kameo.peerIdToBytes(vec.base58).toString('hex'), vec.hex)
    } else if (vec.error) {
      expectKameoError(() => kameo.peerIdFromBytes(hex(vec.input_hex)), vec.error)
    } else {
      assert.equal(kameo.peerIdFromBytes(hex(vec.input_hex)), vec.base58)
      assert.equal(kameo.peerIdToBytes(vec.base58).toString('hex'), vec.hex)
    }
  }
})

test('registry keys', () => {
  for (const vec of V.keys) {
    assert.equal(kameo.providerKey(vec.actor_name).toString('hex'), vec.provider_key_hex)
    assert.equal(kameo.metadataKey(vec.actor_name, vec.peer_id), vec.metadata_key)
    assert.equal(kameo.metadataKey(vec.actor_name, kameo.peerIdToBytes(vec.peer_id)), vec.metadata_key)
    assert.deepEqual(kameo.parseMetadataKey(vec.metadata_key), [vec.actor_name, vec.peer_id])
    assert.deepEqual(kameo.parseMetadataKey(Buffer.from(vec.metadata_key)), [vec.actor_name, vec.peer_id])
  }
  expectKameoError(() => kameo.parseMetadataKey('counter:meta:'), 'KAMEO_INVALID_METADATA_KEY')
})

test('remote ids', () => {
  for (const vec of V.remote_ids) {
    const got =
      vec.kind === 'message'
        ? kameo.remoteMessageId(vec.crate_name, vec.crate_major, vec.module_path, vec.message_type, vec.actor_type, vec.impl_generics)
        : kameo.remoteActorId(vec.module_path, vec.ident)
    assert.equal(got, vec.id)
  }
})

for (const vec of V.msgpack) {
  test(`msgpack ${vec.name} matches rmp_serde`, () => {
    const value = fromJson(vec.value)
    assert.deepEqual(kameo.unpack(hex(vec.hex)), value)
    if (packsExactly(vec.value)) {
      assert.equal(kameo.pack(value).toString('hex'), vec.hex)
    } else {
      assert.deepEqual(kameo.unpack(kameo.pack(value)), value)
    }
  })
}

test('ask and tell helpers build the requests kameo sends', () => {
  const byName = Object.fromEntries(V.requests.map((v) => [v.name, v]))
  const peer = byName.ask_typical.value.Ask.actor_id.peer_id
  const req = kameo.ask(kameo.actorId(42, peer), 'counter', 'inc', kameo.pack({ amount: 5 }), {
    mailboxTimeout: 1.5,
    replyTimeout: { secs: 5, nanos: 0 },
  })
  assert.equal(kameo.encodeRequest(req).toString('hex'), byName.ask_typical.hex)
  const tell = kameo.tell(kameo.actorId(42n, peer), 'counter', 'inc', kameo.pack({ amount: 5 }), { mailboxTimeout: [0, 250000000] })
  assert.equal(kameo.encodeRequest(tell).toString('hex'), byName.tell_typical.hex)
  assert.deepEqual(kameo.decodeRequest(kameo.encodeRequest(kameo.tell(0, '', '', new Uint8Array()))).Tell.actor_id, {
    sequence_id: 0,
    peer_id: null,
  })
})

test('u64s: numbers up to 2^53-1, BigInts beyond, both accepted', () => {
  const max = 2n ** 64n - 1n
  const data = kameo.encodeRegistration(max, null, 'x')
  assert.deepEqual(kameo.decodeRegistration(data), { sequence_id: max, peer_id: null, remote_id: 'x' })
  assert.deepEqual(kameo.decodeRegistration(kameo.encodeRegistration(2 ** 53 - 1, null, '')).sequence_id, 2 ** 53 - 1)
  assert.deepEqual(kameo.decodeRegistration(kameo.encodeRegistration(2n ** 53n, null, '')).sequence_id, 2n ** 53n)
  assert.deepEqual(kameo.actorIdFromBytes(kameo.actorIdToBytes(5n)), { sequence_id: 5, peer_id: null })
  expectKameoError(() => kameo.encodeRegistration(-1, null, ''), 'KAMEO_INVALID_VALUE')
  expectKameoError(() => kameo.encodeRegistration(2n ** 64n, null, ''), 'KAMEO_INVALID_VALUE')
  expectKameoError(() => kameo.actorIdFromBytes(new Uint8Array(7)), 'KAMEO_ACTOR_ID_TOO_SHORT')
})

test('MessagePack values: bytes, Maps, BigInts, non-finite numbers', () => {
  const value = { b: new Uint8Array([1, 2, 3]), m: new Map([[1, 'one'], ['k', [true, null]]]), big: -(2n ** 63n), nan: NaN, inf: -Infinity, f: 0.5 }
  const back = kameo.unpack(kameo.pack(value))
  assert.deepEqual(back.b, Buffer.from([1, 2, 3]))
  assert.deepEqual(back.m, value.m)
  assert.equal(back.big, value.big)
  assert.ok(Number.isNaN(back.nan))
  assert.equal(back.inf, -Infinity)
  assert.equal(back.f, 0.5)
  // a Buffer, an ArrayBuffer and a DataView are bytes too
  assert.equal(kameo.pack(Buffer.from('hi')).toString('hex'), 'c4026869')
  assert.equal(kameo.pack(new Uint8Array([104, 105]).buffer).toString('hex'), 'c4026869')
  assert.equal(kameo.pack(new DataView(new Uint8Array([104, 105]).buffer)).toString('hex'), 'c4026869')
  expectKameoError(() => kameo.pack(2n ** 64n), 'KAMEO_MSGPACK_INTEGER_RANGE')
  expectKameoError(() => kameo.pack({ f() {} }), 'KAMEO_INVALID_VALUE')
  expectKameoError(() => kameo.pack(undefined), 'KAMEO_INVALID_VALUE')
  expectKameoError(() => kameo.unpack(hex('c1')), 'KAMEO_MSGPACK_RESERVED')
})

test('value errors are typed and name the path', () => {
  assert.throws(
    () => kameo.encodeRequest({ Ask: { actor_id: { sequence_id: -1 } } }),
    (e) => e instanceof KameoError && e.code === 'KAMEO_INVALID_VALUE' && /Ask/.test(e.message),
  )
  assert.throws(
    () => kameo.encodeRequest(kameo.tell(1, 'a', 'm', [1, 2])),
    (e) => e.code === 'KAMEO_INVALID_VALUE' && /payload/.test(e.message),
  )
  expectKameoError(() => kameo.encodeResponse({ Tell: { Err: { HandlerError: new Uint8Array() } } }), 'KAMEO_INVALID_VALUE')
  expectKameoError(() => kameo.duration(-1), 'KAMEO_INVALID_VALUE')
  assert.throws(() => kameo.decodeRequest('text'), TypeError)
})

test('decode errors carry byte offsets', () => {
  assert.throws(
    () => kameo.decodeRequest(hex('a1635368')),
    (e) => e instanceof KameoError && e.code === 'KAMEO_EOF' && e.offset === 2,
  )
  expectKameoError(() => kameo.decodeRegistration(hex('00010000')), 'KAMEO_REGISTRATION_TRUNCATED')
})

test('ESM entry point and the root namespace', async () => {
  const esm = await import('polywire/kameo')
  assert.equal(esm.encodeRequest, kameo.encodeRequest)
  assert.equal(require('polywire').kameo, kameo)
})

test('random bytes never crash the decoders', () => {
  let seed = 0x2545f491
  const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24
  for (let i = 0; i < 2000; i++) {
    const data = Buffer.from(Array.from({ length: next() % 64 }, next))
    for (const decode of [kameo.decodeRequest, kameo.decodeResponse, kameo.decodeRegistration, kameo.unpack]) {
      try {
        decode(data)
      } catch (e) {
        assert.ok(e instanceof KameoError, `${decode.name}(${data.toString('hex')}): ${e}`)
      }
    }
  }
})
