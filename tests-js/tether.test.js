'use strict'
// polywire/tether against the shared vectors (bytes made by upstream
// tether.js), the JavaScript value mapping, errors and properties.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')

const tether = require('polywire/tether')
const { TetherSymbol, TetherProxy, TetherUuid, TetherError, PolywireError } = tether

const V = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'vectors', 'tether.json'), 'utf8'))
const hex = (s) => Buffer.from(s, 'hex')
const H = (b) => Buffer.from(b).toString('hex')
const optsOf = (v) => ({ latin1: v.text === 'latin1' })

test('values encode to the upstream bytes and decode back', () => {
  assert.ok(V.values.length >= 30)
  for (const v of V.values) {
    const value = tether.fromTyped(v.value)
    assert.equal(H(tether.encode(value, optsOf(v))), v.hex, v.name)
    assert.deepStrictEqual(tether.decode(hex(v.hex), optsOf(v)), value, v.name)
    assert.deepStrictEqual(tether.toTyped(tether.decode(hex(v.hex), optsOf(v))), v.value, v.name)
    assert.equal(tether.toHex(hex(v.hex)), v.hex)
  }
})

test('message sends', () => {
  for (const v of V.message_sends) {
    const args = v.arguments.map(tether.fromTyped)
    const m = tether.decodeMessageSend(hex(v.hex), optsOf(v))
    assert.deepStrictEqual(m, { uuid: v.uuid, receiver: v.receiver, selector: v.selector, arguments: args }, v.name)
    const b = tether.encodeMessageSend(v.receiver, v.selector, args, { uuid: v.uuid, ...optsOf(v) })
    assert.equal(H(b) === v.hex, v.encode, v.name)
    const again = tether.encodeMessageSend(new TetherProxy(v.receiver), new TetherSymbol(v.selector), args, { uuid: new TetherUuid(v.uuid), ...optsOf(v) })
    assert.deepEqual(again, b)
  }
})

test('answers, both forms', () => {
  for (const v of V.answers) {
    const result = tether.fromTyped(v.result)
    assert.deepStrictEqual(tether.decodeAnswer(hex(v.hex)), { uuid: v.uuid, result }, v.name)
    assert.equal(H(tether.encodeAnswer(result, { uuid: v.uuid ?? undefined })), v.hex, v.name)
  }
})

test('handshakes', () => {
  for (const v of V.handshakes) {
    assert.equal(H(tether.encodeHandshake(v.exposure_hash)), v.hex)
    assert.equal(tether.decodeHandshake(hex(v.hex)), v.exposure_hash)
  }
})

test('MCP tool helpers', () => {
  for (const v of V.tool_arguments) {
    const got = tether.toolArguments(tether.fromTyped(v.receiver), v.selector, v.arguments.map(tether.fromTyped))
    assert.equal(JSON.stringify(got), v.json, v.name)
  }
  for (const v of V.tool_results) {
    const want = tether.fromTyped(v.result)
    assert.deepStrictEqual(tether.readToolResult(v.json), want, v.name)
    assert.deepStrictEqual(tether.readToolResult(JSON.parse(v.json)), want, v.name)
    assert.deepStrictEqual(tether.readToolResult(Buffer.from(v.json)), want, v.name)
  }
  for (const v of V.hex) assert.equal(tether.toHex(tether.fromHex(v.hex)), v.bytes)
})

function runError(v) {
  const o = optsOf(v)
  const x = v.input
  switch (v.op) {
    case 'encode': return tether.encode(tether.fromTyped(x), o)
    case 'decode': return tether.decode(hex(x), o)
    case 'decode_answer': return tether.decodeAnswer(hex(x), o)
    case 'decode_message_send': return tether.decodeMessageSend(hex(x), o)
    case 'decode_handshake': return tether.decodeHandshake(hex(x))
    case 'from_hex': return tether.fromHex(x)
    case 'from_hex_bytes': return tether.fromHex(x, { words: false })
    case 'read_tool_result': return tether.readToolResult(x)
  }
  throw new Error(v.op)
}

test('errors carry the code and the offset', () => {
  for (const v of V.errors) {
    let err
    try {
      // Out-of-range proxies are refused by the TetherProxy constructor itself.
      runError(v)
    } catch (e) {
      err = e
    }
    assert.ok(err instanceof TetherError && err instanceof PolywireError, `${v.name}: ${err}`)
    assert.equal(err.code, v.code, `${v.name}: ${err.message}`)
    if (v.op !== 'encode') assert.equal(err.offset, v.offset, `${v.name}: ${err.message}`)
    if (v.message_starts_with) assert.ok(err.message.startsWith(v.message_starts_with), err.message)
    if (v.message_contains) assert.ok(err.message.includes(v.message_contains), err.message)
  }
})

test('the document examples', () => {
  assert.deepEqual(tether.toolArguments(3, '+', [4]), { receiver: '40000003', selector: '+', arguments: '200000080000000140000004' })
  assert.equal(tether.readToolResult({ result: '40000007' }), 7)
  assert.deepStrictEqual(tether.decodeAnswer(hex('2000001d200000050000000568656c6c6f')), { uuid: null, result: 'hello' })
  assert.deepEqual([...tether.encodeAnswer(7).subarray(0, 4)], [0x20, 0x00, 0x00, 0x1d])
})

test('value mapping and argument errors', () => {
  assert.deepStrictEqual(tether.decode(tether.encode(5n)), 5)
  assert.deepStrictEqual(tether.decode(tether.encode(new Uint8Array([1, 2]).buffer)), new Uint8Array([1, 2]))
  assert.ok(new TetherSymbol('a').equals(new TetherSymbol('a')) && !new TetherSymbol('a').equals('a'))
  assert.ok(new TetherProxy(3).equals(new TetherProxy(3)))
  assert.equal(new TetherUuid('6FC0EC4F-E59F-4BEA-9D57-0D9FDD1108F1').value, '6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1')
  const codeOf = (f) => { try { f() } catch (e) { return e.code } return null }
  assert.equal(codeOf(() => tether.encode(1.5)), 'TETHER_UNSUPPORTED_TYPE')
  assert.equal(codeOf(() => tether.encode(undefined)), 'TETHER_UNSUPPORTED_TYPE')
  assert.equal(codeOf(() => tether.encode(2n ** 100n)), 'TETHER_INTEGER_RANGE')
  assert.equal(codeOf(() => tether.encode(-1)), 'TETHER_INTEGER_RANGE')
  assert.equal(codeOf(() => new TetherProxy(-1)), 'TETHER_EXPOSURE_HASH_RANGE')
  assert.equal(codeOf(() => tether.encodeHandshake(2 ** 40)), 'TETHER_EXPOSURE_HASH_RANGE')
  assert.equal(codeOf(() => tether.encode('\ud800')), 'TETHER_UNENCODABLE_CHARACTER')
  const circular = []
  circular.push(circular)
  assert.equal(codeOf(() => tether.encode(circular)), 'TETHER_CYCLE')
  const a = tether.decodeMessageSend(tether.encodeMessageSend(1, 'foo', []))
  const b = tether.decodeMessageSend(tether.encodeMessageSend(1, 'foo', []))
  assert.notEqual(a.uuid, b.uuid)
  assert.equal(a.uuid[14], '4')
})

test('random values round-trip and garbage never crashes', () => {
  let seed = 42
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  const gen = (d) => {
    switch (rnd(d > 3 ? 8 : 9)) {
      case 0: return rnd(0x1fffffff)
      case 1: return rnd(2) === 1
      case 2: return null
      case 3: return String.fromCodePoint(...Array.from({ length: rnd(6) }, () => rnd(0xd000)))
      case 4: return new TetherSymbol('s' + rnd(100))
      case 5: return new Uint8Array(Array.from({ length: rnd(5) }, () => rnd(256)))
      case 6: return new TetherProxy(rnd(0x0ffffffe))
      case 7: return new TetherUuid('6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f' + rnd(10))
      default: return Array.from({ length: rnd(4) }, () => gen(d + 1))
    }
  }
  for (let i = 0; i < 500; i++) {
    const v = gen(0)
    assert.deepStrictEqual(tether.decode(tether.encode(v)), v)
  }
  for (let i = 0; i < 500; i++) {
    const b = Buffer.from(Array.from({ length: rnd(40) }, () => (rnd(3) === 0 ? 0x20 : rnd(256))))
    for (const f of [tether.decode, tether.decodeAnswer, tether.decodeMessageSend, tether.decodeHandshake]) {
      try { f(b) } catch (e) { assert.ok(e instanceof TetherError, String(e)) }
    }
  }
})
