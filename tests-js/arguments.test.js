'use strict'
// Issue #17, "Errors: the same rules everywhere": every exported function,
// class and method of every subpath (polywire/kado, toon, tether, axon,
// kameo) is swept with a wrong value for each parameter in turn: a string
// where a number goes, a number where a string goes, null, undefined, a
// Symbol, a BigInt, objects, -1, 1.5, NaN, Infinity, 2^32, 2^53, 2^64, ...
// Each call gives a value or an error that has a polywire `code`, is
// `instanceof PolywireError`, and carries no N-API conversion message. A
// TypeError or RangeError (a bad argument) names the parameter. The first
// test fails when an export has no entry in the sweep table, so a new export
// cannot go unswept.
const test = require('node:test')
const assert = require('node:assert/strict')
const { Sentinel, throwingProxy } = require('./hostile_values.js')

const { PolywireError } = require('polywire')
const kado = require('polywire/kado')
const toon = require('polywire/toon')
const tether = require('polywire/tether')
const axon = require('polywire/axon')
const kameo = require('polywire/kameo')
const llm = require('polywire/llm')

const FORMATS = { kado, toon, tether, axon, kameo, llm }

// Codes: FORMAT_WHAT (digits allowed after the first letter: KADO_INVALID_UTF8);
// AXON's codes are the protocol's own (`invalid_envelope`, ...).
const CODE = /^[A-Z][A-Z0-9]*_[A-Z0-9_]+$/
// The daemon client's errors carry the daemon's codes (`invalid_command`, ...).
const isCode = (format, code) =>
  typeof code === 'string' && (CODE.test(code) || (format === 'axon' && (axon.ERROR_CODES.includes(code) || axon.DAEMON_ERROR_CODES.includes(code))))
// What N-API's own argument conversion says (or V8's, uncaught).
const NAPI_TEXT = /Failed to convert|napi|rust type|[A-Z][a-z]+Expected\b|InvalidArg|GenericFailure|call stack|Cannot convert|is not a function|is not iterable|Cannot read prop|undefined \(reading/i



// [label, value]: each in turn for each parameter.
const BAD = [
  ['NaN', NaN],
  ['-1', -1],
  ['1.5', 1.5],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['-0', -0],
  ['2**31', 2 ** 31],
  ['2**32', 2 ** 32],
  ['2**32 + 2', 2 ** 32 + 2],
  ['2**53', 2 ** 53],
  ['-(2**53)', -(2 ** 53)],
  ['2**64', 2 ** 64],
  ['1e300', 1e300],
  ['-1n', -1n],
  ['2n', 2n],
  ['2n**53n', 2n ** 53n],
  ['2n**64n', 2n ** 64n],
  ["'1'", '1'],
  ["'x'", 'x'],
  ["''", ''],
  ['lone surrogate', '\ud800x'],
  ['{}', {}],
  ['[]', []],
  ['[1]', [1]],
  ['null', null],
  ['undefined', undefined],
  ['true', true],
  ['false', false],
  ['Symbol', Symbol('s')],
  ['function', () => 1],
  ['Uint8Array', new Uint8Array([1, 2, 3])],
  ['ArrayBuffer', new ArrayBuffer(2)],
  ['Date', new Date(0)],
  ['Map', new Map([[1, 2]])],
  ['null-prototype object', Object.create(null)],
  ['Number object', Object(1)],
  ['String object', Object('s')],
  [
    'throwing toString',
    {
      toString() {
        throw new Sentinel('toString')
      },
      valueOf() {
        throw new Sentinel('valueOf')
      },
    },
  ],
  ['throwing Proxy', throwingProxy()],
]

// ------------------------------------------------------------ fixtures

const { TOONEncoder, TOONDecoder, FrameDecoder } = kado
const FRAME = new TOONEncoder().encode(1, { hello: 'world' }, 7, 1000)
const BIG_FRAME = new TOONEncoder().encode(3, { s: 'a'.repeat(5000) }, 7, 1000)
const SEED = Buffer.alloc(32, 9)
const LOCAL = axon.agentIdFromSeed(SEED)
const REMOTE = axon.agentIdFromSeed(Buffer.alloc(32, 3))
const REQUEST = axon.envelope(LOCAL, REMOTE, 'query', { question: 'q' }, { ts: 1000 })
const PEER = kameo.peerIdFromPublicKey(Buffer.alloc(32, 5))
const UUID = '6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1'
const { TetherSymbol, TetherProxy, TetherUuid } = tether
const SEND = tether.encodeMessageSend(3, '+', [4], { uuid: UUID })
const ANSWER = tether.encodeAnswer(7, { uuid: UUID })
const HEADER = { version: 1, type: 1, payloadLength: 0, sequenceId: 0, timestamp: 0 }
const AXON1_REQUEST = axon.axon1.request({ question: 'q' }, { id: UUID })
const OTHER_PUBKEY = 'O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik='
// axon's DaemonClient: a fake daemon's socket (started on first use) and a peer it knows.
const { FakeDaemon, newKey } = require('./fake_axon_daemon.js')
const SWEEP_DIR = require('node:fs').mkdtempSync('/tmp/pwa-')
const SWEEP_SOCK = require('node:path').join(SWEEP_DIR, 'axon.sock')
const SWEEP_PEER = newKey(1)[2]

async function collect(iterable) {
  const out = []
  for await (const x of iterable) out.push(x)
  return out
}

// ------------------------------------------------------------ the sweep table
//
// Key: `format.name` (a function or a class's constructor),
// `format.Class.static`, `format.Class#method`. Value: cases
// `[call, validArgs, names, opts]`; each argument in turn is replaced by each
// BAD value. `names[i]` is the parameter's name (or a list of names, any of
// which will do), which the message of a TypeError/RangeError for that
// argument must contain (null: not checked, for arguments whose errors are
// about a value inside them). `opts.coded`: the
// valid call may end in a coded error too (a send before the handshake).
// Extra cases sweep the fields of an options object.

const SWEEP = {
  // ---------------------------------------------------------- kado
  'kado.TOONEncoder#encode': [
    [(...a) => new TOONEncoder().encode(...a), [1, { a: 1 }, 1, 1000], ['type', null, 'sequenceId', 'timestamp']],
  ],
  'kado.TOONEncoder#encodeHeader': [
    [(h) => new TOONEncoder().encodeHeader(h), [HEADER], ['header']],
    [(v) => new TOONEncoder().encodeHeader({ ...HEADER, version: v }), [1], ['version']],
    [(v) => new TOONEncoder().encodeHeader({ ...HEADER, type: v }), [1], ['type']],
    [(v) => new TOONEncoder().encodeHeader({ ...HEADER, payloadLength: v }), [0], ['payloadLength']],
    [(v) => new TOONEncoder().encodeHeader({ ...HEADER, sequenceId: v }), [0], ['sequenceId']],
    [(v) => new TOONEncoder().encodeHeader({ ...HEADER, timestamp: v }), [0], ['timestamp']],
  ],
  'kado.TOONEncoder#encodePayload': [[(d) => new TOONEncoder().encodePayload(d), [{ a: 1 }], [null]]],
  'kado.TOONEncoder.encodeInstruction': [[(...a) => TOONEncoder.encodeInstruction(...a), ['do it', 1], [null, 'sequenceId']]],
  'kado.TOONEncoder.encodeToolCall': [[(...a) => TOONEncoder.encodeToolCall(...a), ['tool', { a: 1 }, 1], [null, null, 'sequenceId']]],
  'kado.TOONEncoder.encodeStatus': [[(...a) => TOONEncoder.encodeStatus(...a), ['ok', 0.5, 1], [null, null, 'sequenceId']]],
  'kado.TOONDecoder#decode': [
    [(...a) => new TOONDecoder().decode(...a), [BIG_FRAME, { maxSize: 1 << 20 }], ['buffer', 'options']],
    [(m) => new TOONDecoder().decode(BIG_FRAME, { maxSize: m }), [1 << 20], ['maxSize']],
  ],
  'kado.TOONDecoder#decodeRaw': [
    [(...a) => new TOONDecoder().decodeRaw(...a), [BIG_FRAME, { maxSize: 1 << 20 }], ['buffer', 'options']],
    [(m) => new TOONDecoder().decodeRaw(BIG_FRAME, { maxSize: m }), [1 << 20], ['maxSize']],
  ],
  'kado.TOONDecoder#decodeHeader': [[(b) => new TOONDecoder().decodeHeader(b), [FRAME], ['buffer']]],
  'kado.TOONDecoder#decodePayload': [
    [(...a) => new TOONDecoder().decodePayload(...a), [BIG_FRAME.subarray(18), 3, { maxSize: 1 << 20 }], ['buffer', null, 'options']],
    [(m) => new TOONDecoder().decodePayload(BIG_FRAME.subarray(18), 3, { maxSize: m }), [1 << 20], ['maxSize']],
  ],
  'kado.TOONDecoder#validate': [[(b) => new TOONDecoder().validate(b), [FRAME], ['buffer']]],
  'kado.FrameDecoder': [
    [(o) => new FrameDecoder(o).feed(FRAME), [{ maxFrameSize: 4096 }], ['options']],
    [(m) => new FrameDecoder({ maxFrameSize: m }).feed(FRAME), [4096], ['maxFrameSize']],
    [(r) => new FrameDecoder({ raw: r }).feed(FRAME), [true], ['raw']],
  ],
  'kado.FrameDecoder#feed': [[(c) => new FrameDecoder().feed(c), [FRAME], ['chunk']]],
  'kado.compress': [[(b) => kado.compress(b), [Buffer.alloc(2000, 1)], ['data']]],
  'kado.decompress': [
    [(...a) => kado.decompress(...a), [kado.compress(Buffer.alloc(2000, 1)), { maxSize: 4096 }], ['data', 'options']],
    [(m) => kado.decompress(kado.compress(Buffer.alloc(2000, 1)), { maxSize: m }), [4096], ['maxSize']],
  ],
  'kado.isCompressed': [[(b) => kado.isCompressed(b), [FRAME], ['buffer']]],

  // ---------------------------------------------------------- toon
  'toon.encode': [
    [(...a) => toon.encode(...a), [{ a: [1, 2] }, { indentSize: 2 }], [null, 'options']],
    [(v) => toon.encode({ a: { b: 1 } }, { indentSize: v }), [2], ['indentSize']],
    [(v) => toon.encode({ a: { b: 1 } }, { indent: v }), [2], ['indent']],
    [(v) => toon.encode({ a: [1, 2] }, { delimiter: v }), [','], ['delimiter']],
    [(v) => toon.encode({ a: { b: 1 } }, { keyFolding: v }), ['safe'], ['keyFolding']],
    [(v) => toon.encode({ a: { b: { c: 1 } } }, { keyFolding: 'safe', flattenDepth: v }), [2], ['flattenDepth']],
    [(v) => toon.encode({ a: 1 }, { replacer: v }), [(k, x) => x], ['replacer']],
    [(v) => toon.encode({ a: 1 }, { replacer: () => v }), [1], [null]],
    [(v) => toon.encode({ a: 1 }, { replacer: (k, x) => (k === 'a' ? toon.rawString(v) : x) }), ['raw'], ['Raw string']],
  ],
  'toon.encodeLines': [
    [(...a) => [...toon.encodeLines(...a)], [{ a: [1, 2] }, { indentSize: 2 }], [null, 'options']],
    [(v) => [...toon.encodeLines({ a: { b: 1 } }, { indentSize: v })], [2], ['indentSize']],
  ],
  'toon.decode': [
    [(...a) => toon.decode(...a), ['a[2]: 1,2', { indentSize: 2 }], ['input', 'options']],
    [(v) => toon.decode('a:\n  b: 1', { indentSize: v }), [2], ['indentSize']],
    [(v) => toon.decode('a:\n  b: 1', { indent: v }), [2], ['indent']],
    [(v) => toon.decode('a: 1', { strict: v }), [true], ['strict']],
    [(v) => toon.decode('a.b: 1', { expandPaths: v }), ['safe'], ['expandPaths']],
  ],
  'toon.decodeFromLines': [
    [(...a) => toon.decodeFromLines(...a), [['a:', '  b: 1'], { indentSize: 2 }], [['lines', 'line'], 'options']],
    [(v) => toon.decodeFromLines(['a:', v]), ['  b: 1'], ['line']],
    [(v) => toon.decodeFromLines(['a: 1'], { indentSize: v }), [2], ['indentSize']],
    [(v) => toon.decodeFromLines(['a.b: 1'], { expandPaths: v }), ['safe'], ['expandPaths']],
  ],
  'toon.decodeStreamSync': [
    [(...a) => [...toon.decodeStreamSync(...a)], [['a:', '  b: 1'], { indentSize: 2 }], [['lines', 'line'], 'options']],
    [(v) => [...toon.decodeStreamSync(['a:', v])], ['  b: 1'], ['line']],
    [(v) => [...toon.decodeStreamSync(['a: 1'], { indentSize: v })], [2], ['indentSize']],
  ],
  'toon.decodeStream': [
    [(...a) => collect(toon.decodeStream(...a)), [['a:', '  b: 1'], { indentSize: 2 }], [['source', 'line'], 'options']],
    [(v) => collect(toon.decodeStream(['a:', v])), ['  b: 1'], ['line']],
    [
      (v) =>
        collect(
          toon.decodeStream(
            (async function* () {
              yield 'a:'
              yield v
            })(),
          ),
        ),
      ['  b: 1'],
      ['line'],
    ],
    [(v) => collect(toon.decodeStream(['a: 1'], { indentSize: v })), [2], ['indentSize']],
  ],
  'toon.escapeString': [[(s) => toon.escapeString(s), ['a"b'], ['escapeString']]],
  'toon.rawString': [[(s) => toon.rawString(s), ['x'], ['Raw string']]],

  // ---------------------------------------------------------- tether
  'tether.TetherSymbol': [[(n) => new TetherSymbol(n), ['at:put:'], ['name']]],
  'tether.TetherSymbol#equals': [[(o) => new TetherSymbol('a').equals(o), [new TetherSymbol('a')], ['other']]],
  'tether.TetherProxy': [[(h) => new TetherProxy(h), [5], ['exposure hash']]],
  'tether.TetherProxy#equals': [[(o) => new TetherProxy(5).equals(o), [new TetherProxy(5)], ['other']]],
  'tether.TetherUuid': [[(t) => new TetherUuid(t), [UUID], ['UUID']]],
  'tether.TetherUuid#equals': [[(o) => new TetherUuid(UUID).equals(o), [new TetherUuid(UUID)], ['other']]],
  'tether.encode': [
    [(...a) => tether.encode(...a), [[1, 'a', true, null], { latin1: false, maxDepth: 10 }], [null, 'options']],
    [(v) => tether.encode([1], { maxDepth: v }), [10], ['maxDepth']],
    [(v) => tether.encode('é', { latin1: v }), [true], ['latin1']],
  ],
  'tether.decode': [
    [(...a) => tether.decode(...a), [tether.encode([1, 'a']), { maxDepth: 10 }], ['data', 'options']],
    [(v) => tether.decode(tether.encode([1]), { maxDepth: v }), [10], ['maxDepth']],
  ],
  'tether.encodeMessageSend': [
    [(...a) => tether.encodeMessageSend(...a), [3, '+', [4], { uuid: UUID }], ['receiver', 'selector', 'arguments', 'options']],
    [(v) => tether.encodeMessageSend(3, '+', [4], { uuid: v }), [UUID], ['uuid']],
    [(v) => tether.encodeMessageSend(3, '+', [4], { maxDepth: v }), [3], ['maxDepth']],
  ],
  'tether.decodeMessageSend': [[(...a) => tether.decodeMessageSend(...a), [SEND, { latin1: false }], ['data', 'options']]],
  'tether.encodeAnswer': [
    [(...a) => tether.encodeAnswer(...a), [7, { uuid: UUID }], [null, 'options']],
    [(v) => tether.encodeAnswer(7, { uuid: v }), [UUID], ['uuid']],
  ],
  'tether.decodeAnswer': [[(...a) => tether.decodeAnswer(...a), [ANSWER, { maxDepth: 3 }], ['data', 'options']]],
  'tether.encodeHandshake': [[(h) => tether.encodeHandshake(h), [5], ['exposure hash']]],
  'tether.decodeHandshake': [[(b) => tether.decodeHandshake(b), [tether.encodeHandshake(5)], ['data']]],
  'tether.toHex': [[(b) => tether.toHex(b), [SEND], ['data']]],
  'tether.fromHex': [
    [(...a) => tether.fromHex(...a), ['40000007', { words: true }], ['hex', 'options']],
    [(v) => tether.fromHex('4000', { words: v }), [false], ['words']],
  ],
  'tether.toolArguments': [[(...a) => tether.toolArguments(...a), [3, '+', [4], { maxDepth: 5 }], [null, 'selector', 'arguments', 'options']]],
  'tether.decodeResultHex': [[(...a) => tether.decodeResultHex(...a), ['40000007', { latin1: false }], ['hex', 'options']]],
  'tether.readToolResult': [
    [(...a) => tether.readToolResult(...a), ['{"result":"40000007"}', { maxDepth: 5 }], ['output', 'options']],
    [(v) => tether.readToolResult({ result: v }), ['40000007'], [null]],
  ],
  'tether.toTyped': [[(...a) => tether.toTyped(...a), [[1, 'a', new TetherSymbol('s')], 5], [null, 'maxDepth']]],
  'tether.fromTyped': [
    [(t) => tether.fromTyped(t), [{ array: [{ int: 1 }, { string: 'a' }] }], ['typed']],
    [(v) => tether.fromTyped({ int: v }), [1], ['int']],
    [(v) => tether.fromTyped({ int: v }), ['12345678901234567890'], ['int']],
    [(v) => tether.fromTyped({ string: v }), ['a'], ['string']],
    [(v) => tether.fromTyped({ bool: v }), [true], ['bool']],
    [(v) => tether.fromTyped({ nil: v }), [null], ['nil']],
    [(v) => tether.fromTyped({ symbol: v }), ['s'], ['name']],
    [(v) => tether.fromTyped({ bytes: v }), ['00ff'], ['bytes']],
    [(v) => tether.fromTyped({ uuid: v }), [UUID], ['UUID']],
    [(v) => tether.fromTyped({ proxy: v }), [5], ['exposure hash']],
    [(v) => tether.fromTyped({ array: v }), [[{ nil: null }]], ['array']],
    [(v) => tether.fromTyped({ array: [v] }), [{ nil: null }], ['typed']],
  ],

  // ---------------------------------------------------------- axon
  'axon.decode': [
    [(...a) => axon.decode(...a), [axon.encode(REQUEST), { fillDefaults: true }], ['data', 'options']],
    [(v) => axon.decode(axon.encode(REQUEST), { fillDefaults: v }), [false], ['fillDefaults']],
  ],
  'axon.encode': [[(e) => axon.encode(e), [REQUEST], [null]]],
  'axon.validate': [
    [(...a) => axon.validate(...a), [REQUEST, { fillDefaults: false }], [null, 'options']],
    [(v) => axon.validate(REQUEST, { fillDefaults: v }), [false], ['fillDefaults']],
  ],
  'axon.envelope': [
    [(...a) => axon.envelope(...a), [LOCAL, REMOTE, 'query', { question: 'q' }, { ts: 1000 }], ['from', 'to', 'kind', null, 'options']],
    [(ts) => axon.envelope(LOCAL, REMOTE, 'query', { question: 'q' }, { ts }), [1000], ['ts']],
    [(id) => axon.envelope(LOCAL, REMOTE, 'query', { question: 'q' }, { id }), ['ab0b7b6e-4d3e-4a4c-9b6f-0d9fdd1108f1'], ['id']],
    [(ref) => axon.envelope(LOCAL, REMOTE, 'response', { data: 1, summary: 's' }, { ref }), [REQUEST.id], ['ref']],
  ],
  'axon.reply': [
    [(...a) => axon.reply(...a), [REQUEST, 'response', { data: 1, summary: 's' }, { ts: 1000 }], [null, 'kind', null, 'options']],
    [(ts) => axon.reply(REQUEST, 'response', { data: 1, summary: 's' }, { ts }), [1000], ['ts']],
    [(id) => axon.reply(REQUEST, 'response', { data: 1, summary: 's' }, { id }), ['ab0b7b6e-4d3e-4a4c-9b6f-0d9fdd1108f1'], ['id']],
  ],
  'axon.errorEnvelope': [
    [(...a) => axon.errorEnvelope(...a), [REQUEST, 'internal', 'it broke', { retryable: true, ts: 1000 }], [null, 'code', 'message', 'options']],
    [(ts) => axon.errorEnvelope(REQUEST, 'internal', 'it broke', { ts }), [1000], ['ts']],
    [(r) => axon.errorEnvelope(REQUEST, 'internal', 'it broke', { retryable: r }), [true], ['retryable']],
  ],
  'axon.agentId': [[(k) => axon.agentId(k), [Buffer.alloc(32, 1)], ['publicKey']]],
  'axon.agentIdFromSeed': [[(k) => axon.agentIdFromSeed(k), [SEED], ['seed']]],
  'axon.publicKeyFromSeed': [[(k) => axon.publicKeyFromSeed(k), [SEED], ['seed']]],
  'axon.isAgentId': [[(s) => axon.isAgentId(s), [LOCAL], ['s']]],
  'axon.sameAgent': [[(...a) => axon.sameAgent(...a), [LOCAL, LOCAL], ['a', 'b']]],
  'axon.negotiate': [
    [(...a) => axon.negotiate(...a), [[1], [1]], ['localVersions', 'remoteVersions']],
    [(v) => axon.negotiate([v], [1]), [1], ['localVersions']],
  ],
  'axon.Session': [
    [(...a) => new axon.Session(...a), [LOCAL, { agentName: 'a' }], ['localId', 'options']],
    [(v) => new axon.Session(LOCAL, { replayWindowMs: v }), [1000], ['replayWindowMs']],
    [(v) => new axon.Session(LOCAL, { replayCapacity: v }), [10], ['replayCapacity']],
    [(v) => new axon.Session(LOCAL, { protocolVersions: v }), [[1]], ['protocolVersions']],
    [(v) => new axon.Session(LOCAL, { features: v }), [['x']], ['features']],
    [(v) => new axon.Session(LOCAL, { agentName: v }), ['a'], ['agentName']],
    [(v) => new axon.Session(LOCAL, { expectedPeer: v }), [REMOTE], ['expectedPeer']],
  ],
  'axon.Session#hello': [[(...a) => new axon.Session(LOCAL).hello(...a), [REMOTE, 1000], ['to', 'nowMs']]],
  // Before the handshake a send fails with not_authorized: coded is all that is asked.
  'axon.Session#send': [[(...a) => new axon.Session(LOCAL).send(...a), [REQUEST, 1000], [null, 'nowMs'], { coded: true }]],
  'axon.Session#receive': [[(...a) => new axon.Session(LOCAL).receive(...a), [axon.encode(REQUEST), 'bidirectional', 1000], ['data', 'stream', 'nowMs']]],
  'axon.Session#expire': [[(n) => new axon.Session(LOCAL).expire(n), [1000], ['nowMs']]],
  'axon.Session#forget': [[(id) => new axon.Session(LOCAL).forget(id), ['x'], ['id']]],

  // ---------------------------------------------------------- axon.axon1
  'axon.axon1.decode': [[(b) => axon.axon1.decode(b), [axon.axon1.encode(AXON1_REQUEST)], ['data']]],
  'axon.axon1.encode': [[(e) => axon.axon1.encode(e), [AXON1_REQUEST], ['envelope']]],
  'axon.axon1.request': [[(...a) => axon.axon1.request(...a), [{ q: 1 }, {}], ['payload', 'options']]],
  'axon.axon1.message': [
    [(...a) => axon.axon1.message(...a), [{ q: 1 }, { kind: 'message' }], ['payload', 'options']],
    [(v) => axon.axon1.message({}, { kind: v }), ['note'], ['kind']],
    [(v) => axon.axon1.message({}, { ref: v }), [UUID], ['ref']],
    [(v) => axon.axon1.message({}, { id: v }), [UUID], ['id']],
  ],
  'axon.axon1.response': [[(...a) => axon.axon1.response(...a), [AXON1_REQUEST, { a: 1 }, {}], ['request', 'payload', 'options']]],
  'axon.axon1.error': [
    [(...a) => axon.axon1.error(...a), [AXON1_REQUEST, 'busy', 'later', {}], ['request', 'code', 'message', 'options']],
    [(v) => axon.axon1.error(AXON1_REQUEST, 'busy', 'later', { retryable: v }), [true], ['retryable']],
  ],
  // ---------------------------------------------------------- axon's Peer (one peer serves the methods)
  'axon.Peer': [[(k) => new axon.Peer(k), [1], [null], { coded: true }]],
  'axon.Peer.start': [
    [async (o) => (await axon.Peer.start(o)).close(), [{}], ['options']],
    [async (v) => (await axon.Peer.start({ identity: v })).close(), [new Uint8Array(32)], ['identity']],
    [async (v) => (await axon.Peer.start({ listen: v })).close(), ['127.0.0.1:0'], ['listen']],
    [async (v) => (await axon.Peer.start({ peers: v })).close(), [[]], [['peers', 'peer']]],
    [async (v) => (await axon.Peer.start({ protocol: v })).close(), ['v2'], ['protocol']],
    [async (v) => (await axon.Peer.start({ capabilities: v })).close(), [{ agent_name: 'x' }], ['capabilities']],
    [async (v) => (await axon.Peer.start({ agentName: v })).close(), ['x'], ['agentName']],
    [async (v) => (await axon.Peer.start({ requestTimeout: v })).close(), [5], ['requestTimeout']],
    [async (v) => (await axon.Peer.start({ handlerTimeout: v })).close(), [5], ['handlerTimeout']],
  ],
  'axon.Peer#addPeer': [[async (p) => (await sweepPeer()).addPeer(p), [{ pubkey: OTHER_PUBKEY }], [['peer', 'pubkey']]]],
  'axon.Peer#removePeer': [[async (a) => (await sweepPeer()).removePeer(a), [REMOTE], ['agentId']]],
  'axon.Peer#peers': [[async () => (await sweepPeer()).peers(), [], []]],
  'axon.Peer#request': [
    [async (...a) => (await sweepPeer()).request(...a), [REMOTE, { q: 1 }, { timeout: 1 }], ['agentId', 'payload', 'options'], { coded: true }],
    [async (v) => (await sweepPeer()).request(REMOTE, {}, { kind: v }), ['request'], ['kind'], { coded: true }],
    [async (v) => (await sweepPeer()).request(REMOTE, {}, { timeout: v }), [1], ['timeout'], { coded: true }],
  ],
  'axon.Peer#send': [
    [async (...a) => (await sweepPeer()).send(...a), [REMOTE, { q: 1 }, { timeout: 1 }], ['agentId', 'payload', 'options'], { coded: true }],
    [async (v) => (await sweepPeer()).send(REMOTE, {}, { kind: v }), ['message'], ['kind'], { coded: true }],
    [async (v) => (await sweepPeer()).send(REMOTE, {}, { ref: v }), [UUID], ['ref'], { coded: true }],
  ],
  'axon.Peer#serve': [[async (h) => (await sweepPeer()).serve(h), [null], ['handler']]],
  'axon.Peer#inbound': [[async () => (await sweepPeer()).inbound(), [], []]],
  'axon.Peer#close': [[async () => (await axon.Peer.start()).close(), [], []]],
  // ---------------------------------------------------------- kameo
  'kameo.encodeRequest': [[(v) => kameo.encodeRequest(v), [kameo.tell(1, 'a', 'm', new Uint8Array(2))], [null]]],
  'kameo.decodeRequest': [[(b) => kameo.decodeRequest(b), [kameo.encodeRequest(kameo.tell(1, 'a', 'm', new Uint8Array(2)))], ['data']]],
  'kameo.encodeResponse': [[(v) => kameo.encodeResponse(v), [{ Tell: { Ok: null } }], [null]]],
  'kameo.decodeResponse': [[(b) => kameo.decodeResponse(b), [kameo.encodeResponse({ Tell: { Ok: null } })], ['data']]],
  'kameo.encodeRegistration': [[(...a) => kameo.encodeRegistration(...a), [1, PEER, 'counter'], ['sequenceId', 'peerId', 'remoteId']]],
  'kameo.decodeRegistration': [[(b) => kameo.decodeRegistration(b), [kameo.encodeRegistration(1, PEER, 'counter')], ['data']]],
  'kameo.metadataKey': [[(...a) => kameo.metadataKey(...a), ['counter', PEER], ['actorName', 'peerId']]],
  'kameo.parseMetadataKey': [[(k) => kameo.parseMetadataKey(k), [kameo.metadataKey('counter', PEER)], ['key']]],
  'kameo.providerKey': [[(k) => kameo.providerKey(k), ['counter'], ['actorName']]],
  'kameo.peerIdFromPublicKey': [[(k) => kameo.peerIdFromPublicKey(k), [Buffer.alloc(32, 5)], ['key']]],
  'kameo.peerIdToBytes': [[(p) => kameo.peerIdToBytes(p), [PEER], ['peerId']]],
  'kameo.peerIdFromBytes': [[(b) => kameo.peerIdFromBytes(b), [kameo.peerIdToBytes(PEER)], ['data']]],
  'kameo.actorIdToBytes': [[(...a) => kameo.actorIdToBytes(...a), [1, PEER], ['sequenceId', 'peerId']]],
  'kameo.actorIdFromBytes': [[(b) => kameo.actorIdFromBytes(b), [kameo.actorIdToBytes(1, PEER)], ['data']]],
  'kameo.remoteMessageId': [
    [
      (...a) => kameo.remoteMessageId(...a),
      ['my_crate', 1, 'my_crate::m', 'Inc', 'Counter', ''],
      ['crateName', 'crateMajor', 'modulePath', 'messageType', 'actorType', 'implGenerics'],
    ],
  ],
  'kameo.remoteActorId': [[(...a) => kameo.remoteActorId(...a), ['my_crate::m', 'Counter'], ['modulePath', 'ident']]],
  'kameo.pack': [[(v) => kameo.pack(v), [{ a: 1 }], [null]]],
  'kameo.unpack': [[(b) => kameo.unpack(b), [kameo.pack({ a: 1 })], ['data']]],
  'kameo.actorId': [[(...a) => kameo.encodeRequest(kameo.tell(kameo.actorId(...a), 'a', 'm', new Uint8Array(1))), [1, PEER], ['sequenceId', 'peerId']]],
  'kameo.duration': [[(v) => kameo.duration(v), [1.5], ['value']]],
  'kameo.ask': [
    [
      (...a) => kameo.encodeRequest(kameo.ask(...a)),
      [1, 'a', 'm', new Uint8Array(2), { mailboxTimeout: 1 }],
      ['actor', 'actorRemoteId', 'messageRemoteId', 'payload', 'options'],
    ],
    [(v) => kameo.encodeRequest(kameo.ask(1, 'a', 'm', new Uint8Array(2), { mailboxTimeout: v })), [1], ['mailboxTimeout']],
    [(v) => kameo.encodeRequest(kameo.ask(1, 'a', 'm', new Uint8Array(2), { replyTimeout: v })), [[1, 5]], ['replyTimeout']],
    [(v) => kameo.encodeRequest(kameo.ask(1, 'a', 'm', new Uint8Array(2), { immediate: v })), [true], ['immediate']],
  ],
  'llm.countTokens': [[(...a) => llm.countTokens(...a), ['hello', { encoding: 'cl100k_base' }], ['text', 'options']]],
  'llm.encodeForLlm': [
    [(...a) => llm.encodeForLlm(...a), [[{ a: 1 }, { a: 2 }, { a: 3 }], { formats: ['toon', 'json'] }], [null, 'options']],
    [(v) => llm.encodeForLlm([{ a: 1 }], { encoding: v }), ['o200k_base'], ['encoding']],
    [(v) => llm.encodeForLlm([{ a: 1 }], { formats: v }), [['json']], ['formats']],
    [(v) => llm.encodeForLlm([{ a: 1 }], { delimiter: v }), ['|'], ['delimiter']],
    [(v) => llm.encodeForLlm([{ a: 1 }], { strategy: v }), ['structure'], ['strategy']],
    [(v) => llm.encodeForLlm([{ a: 1 }], { indentSize: v }), [4], ['indentSize']],
  ],
  'llm.safeEncode': [
    [(...a) => llm.safeEncode(...a), [{ a: [1, 2] }, { fallbackToJson: true }], [null, 'options']],
    [(v) => llm.safeEncode({ a: 1 }, { fallbackToJson: v }), [false], ['fallbackToJson']],
  ],
  'kameo.tell': [
    [
      (...a) => kameo.encodeRequest(kameo.tell(...a)),
      [{ sequence_id: 1, peer_id: PEER }, 'a', 'm', new Uint8Array(2), { mailboxTimeout: 1 }],
      ['actor', 'actorRemoteId', 'messageRemoteId', 'payload', 'options'],
    ],
    [(v) => kameo.encodeRequest(kameo.tell(1, 'a', 'm', new Uint8Array(2), { mailboxTimeout: v })), [{ secs: 1, nanos: 2 }], ['mailboxTimeout']],
    [(v) => kameo.encodeRequest(kameo.tell(1, 'a', 'm', new Uint8Array(2), { immediate: v })), [false], ['immediate']],
  ],
  // ---------------------------------------------------------- axon's DaemonClient (one fake daemon serves the methods)
  'axon.DaemonClient': [[(k) => new axon.DaemonClient(k), [1], [null], { coded: true }]],
  'axon.DaemonClient.connect': [
    [async (o) => { await sweepDaemon(); await (await axon.DaemonClient.connect(o)).close() }, [{ path: SWEEP_SOCK }], ['options'], { coded: true }],
    [async (v) => { await sweepDaemon(); await (await axon.DaemonClient.connect({ path: v })).close() }, [SWEEP_SOCK], ['path']],
    [async (v) => { await sweepDaemon(); await (await axon.DaemonClient.connect({ path: SWEEP_SOCK, timeout: v })).close() }, [5], ['timeout']],
    [async (v) => { await sweepDaemon(); await (await axon.DaemonClient.connect({ path: SWEEP_SOCK, maxEvents: v })).close() }, [10], ['maxEvents']],
  ],
  'axon.DaemonClient#close': [[async () => { await sweepDaemon(); await (await axon.DaemonClient.connect(SWEEP_SOCK)).close() }, [], []]],
  'axon.DaemonClient#send': [
    [async (...a) => (await sweepClient()).send(...a), [SWEEP_PEER, { a: 1 }, {}], ['to', null, 'options']],
    [async (v) => (await sweepClient()).send(SWEEP_PEER, {}, { kind: v }), ['message'], ['kind']],
    [async (v) => (await sweepClient()).send(SWEEP_PEER, {}, { timeoutSecs: v }), [5], ['timeoutSecs']],
    [async (v) => (await sweepClient()).send(SWEEP_PEER, {}, { ref: v }), [UUID], ['ref']],
  ],
  // Adding the same peer twice is the daemon's invalid_command: coded.
  'axon.DaemonClient#addPeer': [
    [async (t) => (await sweepClient()).addPeer(t), ['axon://O2onvM62pC1io6jQKm8Nc2UyFXcd4kOmOsBIoYtZ2ik@127.0.0.1:7100'], [['token', 'pubkey']], { coded: true }],
    [async (v) => (await sweepClient()).addPeer({ pubkey: v, addr: '127.0.0.1:1' }), ['GX9rI+FshTLGq8g4+s1ep4m+DHaykgM0A5v6iz02jWE='], ['pubkey'], { coded: true }],
    [async (v) => (await sweepClient()).addPeer({ pubkey: '6kpsY+KcUgq+9VB7Ey7F+ZVHdq6+vnuSQh7qaRRG0iw=', addr: v }), ['127.0.0.1:1'], ['addr'], { coded: true }],
  ],
  // ---------------------------------------------------------- kameo's Node (one node serves the methods)
  'kameo.Node': [[(k) => new kameo.Node(k), [1], [null], { coded: true }]],
  'kameo.Node.start': [
    [async (o) => (await kameo.Node.start(o)).close(), [{}], ['options']],
    [async (v) => (await kameo.Node.start({ keypairSeed: v })).close(), [new Uint8Array(32)], ['keypairSeed']],
    [async (v) => (await kameo.Node.start({ listen: v })).close(), [['/ip4/127.0.0.1/tcp/0']], ['listen']],
    [async (v) => (await kameo.Node.start({ bootstrap: v })).close(), [[]], ['bootstrap']],
    [async (v) => (await kameo.Node.start({ mdns: v })).close(), [false], ['mdns']],
    [async (v) => (await kameo.Node.start({ requestTimeout: v })).close(), [5], ['requestTimeout']],
    [async (v) => (await kameo.Node.start({ dialTimeout: v })).close(), [5], ['dialTimeout']],
  ],
  'kameo.Node#dial': [[async (a) => (await sweepNode()).dial(a), ['/ip4/127.0.0.1/tcp/1'], ['multiaddr'], { coded: true }]],
  'kameo.Node#lookup': [[async (n) => (await sweepNode()).lookup(n), ['nobody'], ['name']]],
  'kameo.Node#lookupAll': [[async (n) => collect((await sweepNode()).lookupAll(n)), ['nobody'], ['name']]],
  'kameo.Node#register': [
    [
      async (name, handler, options) => {
        const node = await sweepNode()
        await node.register(name, handler, options)
        await node.unregister(name)
      },
      ['swept', (m, v) => v, { remoteId: 'swept.Type' }],
      ['name', 'handler', ['options', 'remoteId']],
    ],
    [async (v) => { const n = await sweepNode(); await n.register('swept', () => 1, { remoteId: v }); await n.unregister('swept') }, ['r'], ['remoteId']],
    [async (v) => { const n = await sweepNode(); await n.register('swept', () => 1, { remoteId: 'r', raw: v }); await n.unregister('swept') }, [false], ['raw']],
  ],
  'kameo.Node#unregister': [[async (n) => (await sweepNode()).unregister(n), ['nobody'], ['name']]],
  'kameo.Node#close': [[async () => (await kameo.Node.start()).close(), [], []]],
  'kameo.RemoteActorRef': [[(k) => new kameo.RemoteActorRef(k), [1], [null], { coded: true }]],
  'kameo.RemoteActorRef#equals': [[async (o) => (await echoRef()).equals(o), [null], [null]]],
  'kameo.RemoteActorRef#ask': [
    [async (m, v, o) => (await echoRef()).ask(m, v, o), ['m', { a: 1 }, {}], ['messageRemoteId', null, 'options']],
    [async (v) => (await echoRef()).ask('m', 1, { mailboxTimeout: v }), [1], ['mailboxTimeout']],
    [async (v) => (await echoRef()).ask('m', 1, { replyTimeout: v }), [5], ['replyTimeout'], { coded: true }],
    [async (v) => (await echoRef()).ask('m', 1, { immediate: v }), [false], ['immediate']],
    [async (v) => (await echoRef()).ask('m', new Uint8Array([0xc0]), { raw: v }), [true], [['raw', 'value']]],
  ],
  'kameo.RemoteActorRef#tell': [
    [async (m, v, o) => (await echoRef()).tell(m, v, o), ['m', [1], {}], ['messageRemoteId', null, 'options']],
    [async (v) => (await echoRef()).tell('m', 1, { mailboxTimeout: v }), [null], ['mailboxTimeout']],
    [async (v) => (await echoRef()).tell('m', 1, { immediate: v }), [false], ['immediate']],
  ],
}

// kameo's Node: one node (and one actor it hosts) for the sweep of their methods.
let SWEEP_NODE = null
let ECHO_REF = null
async function sweepNode() {
  SWEEP_NODE ??= await kameo.Node.start()
  return SWEEP_NODE
}
async function echoRef() {
  ECHO_REF ??= await (await sweepNode()).register('echo', (m, v) => v, { remoteId: 'echo.Type' })
  return ECHO_REF
}
test.after(() => SWEEP_NODE?.close())

// axon's Peer: one peer for the sweep of its methods.
let SWEEP_AXON_PEER = null
async function sweepPeer() {
  SWEEP_AXON_PEER ??= await axon.Peer.start()
  return SWEEP_AXON_PEER
}
test.after(() => SWEEP_AXON_PEER?.close())
// axon's DaemonClient: one fake daemon (tests-js/fake_axon_daemon.js) and one
// client for the sweep of its methods.
let SWEEP_DAEMON = null
let SWEEP_CLIENT = null
async function sweepDaemon() {
  if (SWEEP_DAEMON === null) {
    SWEEP_DAEMON = new FakeDaemon(SWEEP_SOCK)
    await SWEEP_DAEMON.start()
    SWEEP_DAEMON.add(1)
  }
  return SWEEP_DAEMON
}
async function sweepClient() {
  await sweepDaemon()
  SWEEP_CLIENT ??= await axon.DaemonClient.connect(SWEEP_SOCK)
  return SWEEP_CLIENT
}
test.after(async () => {
  await SWEEP_CLIENT?.close()
  await SWEEP_DAEMON?.stop()
  require('node:fs').rmSync(SWEEP_DIR, { recursive: true, force: true })
})

// Exports that need no sweep entry, each with the reason.
const EXEMPT = {
  'kado.TOONEncoder': 'takes no arguments',
  'kado.TOONDecoder': 'takes no arguments',
  'kado.FrameDecoder#finish': 'takes no arguments',
  'tether.TetherSymbol#toString': 'takes no arguments',
  'tether.TetherUuid#toString': 'takes no arguments',
  'axon.DaemonClient.defaultPath': 'takes no arguments',
  'axon.DaemonClient#peers': 'takes no arguments',
  'axon.DaemonClient#status': 'takes no arguments',
  'axon.DaemonClient#whoami': 'takes no arguments',
  'axon.DaemonClient#events': 'takes no arguments',
}
// Error classes: constructed by polywire (a user who constructs one passes
// what they like, as with Error itself).
const ERROR_CLASSES = new Set([PolywireError, kado.KadoError, toon.ToonDecodeError, toon.ToonEncodeError, tether.TetherError, axon.AxonError, kameo.KameoError, llm.LlmError])

// Every callable an export holds: functions, classes (their constructor),
// static methods and prototype methods (getters take no arguments).
function callables() {
  const out = []
  for (const [format, m] of [...Object.entries(FORMATS), ['axon.axon1', axon.axon1]]) {
    for (const [name, value] of Object.entries(m)) {
      if (typeof value !== 'function' || ERROR_CLASSES.has(value) || value.prototype instanceof Error) continue
      out.push(`${format}.${name}`)
      const isClass = /^class\b/.test(Function.prototype.toString.call(value))
      if (!isClass) continue
      for (const s of Object.getOwnPropertyNames(value)) {
        if (['length', 'name', 'prototype'].includes(s)) continue
        if (typeof Object.getOwnPropertyDescriptor(value, s).value === 'function') out.push(`${format}.${name}.${s}`)
      }
      for (const s of Object.getOwnPropertyNames(value.prototype)) {
        if (s === 'constructor') continue
        if (typeof Object.getOwnPropertyDescriptor(value.prototype, s).value === 'function') out.push(`${format}.${name}#${s}`)
      }
    }
  }
  return out
}

test('the sweep table covers every exported function, class and method', () => {
  const all = callables()
  assert.ok(all.length > 80, `only ${all.length} callables found`)
  const missing = all.filter((k) => !(k in SWEEP) && !(k in EXEMPT))
  assert.deepEqual(missing, [], 'exports without a sweep entry (add one to SWEEP, or to EXEMPT with the reason)')
  const stale = [...Object.keys(SWEEP), ...Object.keys(EXEMPT)].filter((k) => !all.includes(k))
  assert.deepEqual(stale, [], 'sweep entries for no export')
  for (const [k, why] of Object.entries(EXEMPT)) assert.ok(typeof why === 'string' && why.length > 5, k)
})

function labelOf(v) {
  if (typeof v === 'symbol') return 'Symbol'
  if (typeof v === 'bigint') return `${v}n`
  const hit = BAD.find(([, b]) => Object.is(b, v))
  if (hit) return hit[0]
  try {
    return String(v)
  } catch {
    return typeof v
  }
}

// Runs a call: `problem` is what is wrong with how it ended (null when it
// returned, or its error is acceptable).
async function verdict(format, f, args, name) {
  let e
  try {
    await f(...args)
    return { error: null, problem: null }
  } catch (err) {
    e = err
  }
  if (e instanceof Sentinel || e?.cause instanceof Sentinel) return { error: e, problem: null }
  if (!(e instanceof Error)) return { error: e, problem: `threw a non-Error ${String(e)}` }
  const desc = `${e.constructor.name} (code ${String(e.code)}): ${e.message}`
  if (!isCode(format, e.code)) return { error: e, problem: `no polywire code: ${desc}` }
  if (!(e instanceof PolywireError)) return { error: e, problem: `not instanceof PolywireError: ${desc}` }
  if (NAPI_TEXT.test(e.message)) return { error: e, problem: `conversion message: ${desc}` }
  const names = [name ?? []].flat()
  if (names.length > 0 && (e instanceof TypeError || e instanceof RangeError) && !names.some((n) => e.message.toLowerCase().includes(n.toLowerCase()))) {
    return { error: e, problem: `the message does not name ${names.join(' or ')}: ${desc}` }
  }
  return { error: e, problem: null }
}

test('every function: the valid call works, each wrong argument gives a value or a coded error', async () => {
  // Problems grouped by where and what kind, with the values that showed it.
  const problems = new Map()
  const note = (where, problem, label) => {
    const kind = problem.replace(/: .*/s, '')
    const k = `${where}: ${kind}`
    if (!problems.has(k)) problems.set(k, { example: problem, values: [] })
    problems.get(k).values.push(label)
  }
  let calls = 0
  for (const [key, cases] of Object.entries(SWEEP)) {
    const format = key.split('.')[0]
    for (const [c, [f, args, names, opts = {}]] of cases.entries()) {
      const where = cases.length > 1 ? `${key} [case ${c}]` : key
      assert.equal(names.length, args.length, `${where}: a name per argument`)
      const valid = await verdict(format, f, args, null)
      calls++
      if (valid.problem) note(`${where} (valid call)`, valid.problem, '-')
      else if (valid.error && !opts.coded) note(`${where} (valid call)`, `failed: ${valid.error.message}`, '-')
      for (let i = 0; i < args.length; i++) {
        const at = `${where} arg ${i} (${names[i] ?? 'a value'})`
        for (const [label, bad] of BAD) {
          const a = args.slice()
          a[i] = bad
          const { problem } = await verdict(format, f, a, names[i])
          calls++
          if (problem) note(at, problem, label)
        }
      }
      // Arguments left out (undefined, but `arguments.length` shorter).
      if (args.length > 0) {
        const i = args.length - 1
        const { problem } = await verdict(format, f, args.slice(0, i), names[i])
        calls++
        if (problem) note(`${where} arg ${i} (${names[i] ?? 'a value'})`, problem, 'left out')
      }
    }
  }
  assert.ok(calls > 3000, `only ${calls} calls`)
  const report = [...problems].map(([k, { example, values }]) => `${k}\n    with ${values.join(', ')}\n    e.g. ${example}`)
  assert.equal(report.length, 0, `${report.length} problems:\n${report.join('\n')}`)
})

// The bounds the issue names, and wrong types for the helpers and
// constructors (which would otherwise return a value built from them), with
// the class and code each gives. The same mistakes in Python give the same
// codes (tests-py/test_arguments.py, test_integer_bounds_and_codes).
const CODES = [
  // Kado: sequence ids past 2^32 - 1, timestamps past 2^53 - 1 (a number) or 2^64 - 1 (a BigInt).
  [() => new TOONEncoder().encode(1, {}, 2 ** 32 - 1, 0), null],
  [() => new TOONEncoder().encode(1, {}, 2 ** 32, 0), ['RangeError', 'KADO_INVALID_ARGUMENT']],
  [() => new TOONEncoder().encode(1, {}, -1, 0), ['RangeError', 'KADO_INVALID_ARGUMENT']],
  [() => new TOONEncoder().encode(1, {}, '1', 0), ['TypeError', 'KADO_INVALID_ARGUMENT']],
  [() => new TOONEncoder().encode(1, {}, 1, 2 ** 53 - 1), null],
  [() => new TOONEncoder().encode(1, {}, 1, 2 ** 53), ['RangeError', 'KADO_INVALID_ARGUMENT']],
  [() => new TOONEncoder().encode(1, {}, 1, 2n ** 64n - 1n), null],
  [() => new TOONEncoder().encode(1, {}, 1, 2n ** 64n), ['RangeError', 'KADO_INVALID_ARGUMENT']],
  [() => kado.compress('not bytes'), ['TypeError', 'KADO_INVALID_ARGUMENT']],
  [() => new TOONEncoder().encode('x', {}, 1), ['TypeError', 'KADO_INVALID_ARGUMENT']],
  [() => new TOONEncoder().encode(9, {}, 1), ['KadoError', 'KADO_UNKNOWN_TYPE']],
  // Flags are booleans, as in Python (no truthiness).
  [() => new kado.FrameDecoder({ raw: 'yes' }), ['TypeError', 'KADO_INVALID_ARGUMENT']],
  [() => tether.encode(1, { latin1: 1 }), ['TypeError', 'TETHER_INVALID_OPTION']],
  [() => tether.fromHex('40000003', { words: 'no' }), ['TypeError', 'TETHER_INVALID_OPTION']],
  // AXON session options: a non-string expectedPeer must not switch peer pinning off.
  [() => new axon.Session(axon.agentIdFromSeed(new Uint8Array(32)), { expectedPeer: 123 }), ['TypeError', 'invalid_envelope']],
  [() => new axon.Session(axon.agentIdFromSeed(new Uint8Array(32)), { agentName: 5 }), ['TypeError', 'invalid_envelope']],
  [() => new axon.Session(axon.agentIdFromSeed(new Uint8Array(32)), { protocolVersions: ['x'] }), ['TypeError', 'invalid_envelope']],
  // Kameo: ids and durations (a sequence id out of range is KAMEO_INVALID_VALUE, as the codec says).
  [() => kameo.actorId(2n ** 64n - 1n), null],
  [() => kameo.actorId(2n ** 64n), ['KameoError', 'KAMEO_INVALID_VALUE']],
  [() => kameo.actorId(-1), ['KameoError', 'KAMEO_INVALID_VALUE']],
  [() => kameo.actorId('x'), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  [() => kameo.actorId({}), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  [() => kameo.actorId(1, 5), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  [() => kameo.actorIdToBytes('1'), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  [() => kameo.encodeRegistration(-1, null, ''), ['KameoError', 'KAMEO_INVALID_VALUE']],
  [() => kameo.encodeRegistration(1, null, 5), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  [() => kameo.tell('x', 'a', 'm', new Uint8Array()), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  [() => kameo.duration('1s'), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  [() => kameo.duration(-1), ['KameoError', 'KAMEO_INVALID_VALUE']],
  [() => kameo.ask(1, 'a', 'm', new Uint8Array(), { replyTimeout: true }), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  [() => kameo.metadataKey(1, PEER), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  [() => kameo.metadataKey('a', 'not a peer id'), ['KameoError', 'KAMEO_INVALID_BASE58']],
  [() => kameo.decodeRequest('text'), ['TypeError', 'KAMEO_INVALID_ARGUMENT']],
  // Tether: wrong types are TETHER_UNSUPPORTED_TYPE (as in Python), options TETHER_INVALID_OPTION.
  [() => new TetherSymbol(5), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => new TetherProxy('5'), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => new TetherProxy(-1), ['TetherError', 'TETHER_EXPOSURE_HASH_RANGE']],
  [() => new TetherUuid(5), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => new TetherUuid('x'), ['TetherError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.fromHex(5), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.decode('x'), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.decodeResultHex(null), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.readToolResult(5), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.encodeHandshake('1'), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.encodeMessageSend(1, 5, []), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.encode(1, { maxDepth: -1 }), ['TetherError', 'TETHER_INVALID_OPTION']],
  [() => tether.toTyped([], 'x'), ['TetherError', 'TETHER_INVALID_OPTION']],
  [() => tether.fromTyped({ what: 1 }), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.fromTyped({ int: 'x' }), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.fromTyped({ bytes: 'zz' }), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.fromTyped({ string: 5 }), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  [() => tether.fromTyped({ array: [{ nil: 0 }] }), ['TypeError', 'TETHER_UNSUPPORTED_TYPE']],
  // AXON: the protocol's code; booleans are booleans.
  [() => axon.envelope(LOCAL, REMOTE, 'query', { question: 'q' }, { ts: 2 ** 53 }), ['AxonError', 'invalid_envelope']],
  [() => axon.decode(axon.encode(REQUEST), { fillDefaults: 'yes' }), ['TypeError', 'invalid_envelope']],
  [() => axon.errorEnvelope(REQUEST, 'internal', 'm', { retryable: 1 }), ['TypeError', 'invalid_envelope']],
  [() => axon.agentId('x'), ['TypeError', 'invalid_envelope']],
  [() => new axon.DaemonClient(), ['TypeError', 'AXON_INVALID_ARGUMENT']],
  // TOON: the reference's TypeError for a lone surrogate, with Python's code.
  [() => toon.encode({ a: '\ud800' }), ['TypeError', 'TOON_UNPAIRED_SURROGATE']],
  [() => toon.decode(5), ['TypeError', 'TOON_INVALID_ARGUMENT']],
  [() => toon.decodeFromLines(['a: 1', 5]), ['TypeError', 'TOON_INVALID_ARGUMENT']],
]

test('bounds and wrong types: the class and code of each', () => {
  const got = CODES.map(([f]) => {
    try {
      f()
    } catch (e) {
      assert.ok(e instanceof PolywireError, `${f}: ${e.message}`)
      return [e.constructor.name, e.code]
    }
    return null
  })
  assert.deepEqual(
    got.map((g, i) => [String(CODES[i][0]), g]),
    CODES.map(([f, want]) => [String(f), want]),
  )
})

test('a surrogate TypeError keeps the reference message', () => {
  assert.throws(() => toon.encode(['ok', 'a\udc00']), {
    name: 'TypeError',
    code: 'TOON_UNPAIRED_SURROGATE',
    message: 'Cannot encode string value containing an unpaired surrogate U+DC00 at index 1',
  })
})
