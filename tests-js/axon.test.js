'use strict'
// polywire/axon against the shared vectors (checked against upstream's own
// message module), the session scenarios, and properties.

const test = require('node:test')
const assert = require('node:assert/strict')
const path = require('node:path')
const fs = require('node:fs')

const axon = require('polywire/axon')
const { AxonError, PolywireError, Session } = axon

const V = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'vectors', 'axon.json'), 'utf8'))
const A = 'ed25519.fe812c12f3ab4ce6ac5db69ac352f906'
const B = 'ed25519.b600306cfa76723fdec395e53a9b3d9f'

test('every message decodes, and encodes to the upstream bytes', () => {
  assert.ok(V.messages.length >= 30)
  for (const m of V.messages) {
    // JavaScript numbers have no int/float distinction: 1.0 is 1 here.
    const floats = m.name === 'numbers in data'
    const env = axon.decode(Buffer.from(m.json))
    if (!floats) assert.deepStrictEqual(env, m.decoded, m.name)
    assert.deepStrictEqual(axon.decode(m.json), env, m.name)
    const asSent = axon.decode(m.json, { fillDefaults: false })
    if (!floats) {
      assert.equal(axon.encode(asSent).toString('utf8'), m.encoded, m.name)
      assert.equal(axon.encode(JSON.parse(m.json)).toString('utf8'), m.encoded, m.name)
    }
    assert.deepStrictEqual(axon.decode(axon.encode(env)), env, m.name)
    assert.deepStrictEqual(axon.validate(JSON.parse(m.json)), env, m.name)
  }
})

function errorBody(v) {
  if (v.json !== null) return v.json
  return JSON.stringify({ v: 1, id: '6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1', from: A, to: B, ts: 1, kind: 'notify', payload: { topic: 't', data: 'x'.repeat(v.notify_data_repeat) } })
}

test('errors carry the protocol codes', () => {
  assert.ok(V.errors.length >= 50)
  for (const v of V.errors) {
    let err
    try {
      axon.decode(Buffer.from(errorBody(v)))
    } catch (e) {
      err = e
    }
    assert.ok(err instanceof AxonError && err instanceof PolywireError, `${v.name}: ${err}`)
    assert.equal(err.code, v.code, `${v.name}: ${err.message}`)
    assert.ok(axon.ERROR_CODES.includes(err.code))
    if (v.message_contains) assert.ok(err.message.includes(v.message_contains), `${v.name}: ${err.message}`)
  }
})

test('agent ids, negotiation and the kind table', () => {
  for (const a of V.agent_ids) {
    const seed = Buffer.from(a.seed, 'hex')
    assert.equal(axon.publicKeyFromSeed(seed).toString('hex'), a.public_key)
    assert.equal(axon.agentId(Buffer.from(a.public_key, 'hex')), a.agent_id)
    assert.equal(axon.agentIdFromSeed(new Uint8Array(seed)), a.agent_id)
  }
  assert.throws(() => axon.agentId(Buffer.alloc(5)), (e) => e instanceof AxonError && e.code === 'invalid_envelope')
  assert.ok(axon.isAgentId(A) && !axon.isAgentId('agent-id') && axon.sameAgent(A, A.replace('fe812c', 'FE812C')))
  for (const n of V.negotiation) {
    if ('selected' in n) assert.equal(axon.negotiate(n.local, n.remote), n.selected)
    else assert.throws(() => axon.negotiate(n.local, n.remote), (e) => e.code === n.code)
  }
  assert.equal(axon.KINDS.length, 13)
  for (const k of V.kinds) {
    const r = axon.KIND_RULES[k.kind]
    assert.equal(r.required, k.required, k.kind)
    assert.equal(r.expectsResponse, k.expects_response, k.kind)
    assert.deepEqual(r.responseKinds, k.response_kinds, k.kind)
    assert.deepEqual(r.laterResponses, k.later_responses ?? [], k.kind)
    assert.equal(r.stream, k.stream, k.kind)
  }
  assert.deepStrictEqual(JSON.parse(JSON.stringify(axon.PAYLOAD_DEFAULTS)), V.defaults)
})

test('reply and error builders', () => {
  for (const r of V.replies) {
    if (r.encoded) {
      const env = axon.reply(r.request, r.kind, r.payload, { id: r.id, ts: r.ts })
      assert.equal(axon.encode(env).toString(), r.encoded, r.name)
    } else {
      assert.throws(() => axon.reply(r.request, r.kind, r.payload, { id: r.id, ts: r.ts }), (e) => e.code === r.code, r.name)
    }
  }
  for (const r of V.error_replies) {
    const env = axon.errorEnvelope(r.request, r.code, r.message, { retryable: r.retryable, id: r.id, ts: r.ts })
    assert.equal(axon.encode(env).toString(), r.encoded)
  }
  const q = axon.envelope(A, B, 'query', { question: '?' })
  assert.equal(q.ref, null)
  const r = axon.reply(q, 'response', { data: null, summary: 'no' })
  assert.deepEqual([r.from, r.to, r.ref], [B, A, q.id])
  assert.throws(() => axon.envelope(A, B, 'subscribe', {}), (e) => e.code === 'unknown_kind')
})

const fill = (t, saved) => Object.entries(saved).reduce((acc, [k, v]) => acc.split(`{${k}}`).join(v), t)

test('session scenarios', () => {
  for (const sc of V.sessions) {
    const c = sc.config
    const s = new Session(c.local_id, { protocolVersions: c.protocol_versions, expectedPeer: c.expected_peer })
    const saved = {}
    sc.steps.forEach((step, i) => {
      const at = `${sc.name}, step ${i}`
      const want = step.expect
      const w = (k) => (typeof want[k] === 'string' ? fill(want[k], saved) : want[k])
      if ('receive' in step) {
        const got = s.receive(Buffer.from(fill(step.receive, saved)), step.stream, step.now)
        assert.equal(got.action, want.action, `${at}: ${JSON.stringify(got)}`)
        if (got.action === 'deliver') {
          assert.equal(got.envelope.id, w('id'), at)
          assert.equal(got.inReplyTo?.id ?? null, w('in_reply_to'), at)
        } else if (got.action === 'respond') {
          assert.equal(got.reply.kind, want.kind, at)
          assert.equal(got.reply.ref, w('ref'), at)
          assert.deepStrictEqual(axon.decode(got.bytes), axon.decode(axon.encode(got.reply)))
          if ('code' in want) assert.equal(got.reply.payload.code, want.code, at)
          if ('message' in want) assert.equal(got.reply.payload.message, want.message, at)
          if ('selected_version' in want) assert.equal(got.reply.payload.selected_version, want.selected_version, at)
          if ('delivered' in want) assert.equal(got.delivered.id, w('delivered'), at)
        } else {
          assert.equal(got.reason, want.reason, at)
          assert.ok(got.message)
        }
      } else if ('send' in step) {
        if ('route' in want) assert.equal(s.send(step.send, step.now).route, want.route, at)
        else assert.throws(() => s.send(step.send, step.now), (e) => e instanceof AxonError && e.code === want.error, at)
      } else if ('hello' in step) {
        const out = s.hello(step.hello, step.now)
        assert.equal(out.route, want.route)
        saved[step.save] = out.envelope.id
      } else if ('expire' in step) {
        assert.deepEqual(s.expire(step.expire).map((p) => p.id), want.expired, at)
      }
      if ('ready' in want) assert.equal(s.ready, want.ready, at)
      if ('peer' in want) assert.equal(s.peer, w('peer'), at)
      if ('version' in want) assert.equal(s.version, want.version, at)
      if ('pending' in want) assert.equal(s.pending.length, want.pending, at)
    })
  }
})

test('two sessions talk', () => {
  const a = new Session(A, { agentName: 'Alice' })
  const b = new Session(B)
  const hello = a.hello(B, 1)
  const got = b.receive(hello.bytes, 'bidirectional', 2)
  assert.equal(got.action, 'respond')
  assert.equal(got.delivered.payload.agent_name, 'Alice')
  assert.equal(a.receive(got.bytes, 'bidirectional', 3).action, 'deliver')
  assert.ok(a.ready && b.ready && a.peer === B && b.peer === A && a.version === 1)
  const q = a.send(axon.envelope(A, B, 'query', { question: 'Who is home?' }, { ts: 4 }), 4)
  const req = b.receive(q.bytes, 'bidirectional', 5).envelope
  assert.equal(req.payload.deadline_ms, 30000)
  const ans = b.send(axon.reply(req, 'response', { data: ['Alice'], summary: 'Alice is home.' }, { ts: 6 }), 6)
  assert.equal(ans.route, 'reply_on_request_stream')
  assert.equal(a.receive(ans.bytes, 'bidirectional', 7).inReplyTo.id, req.id)
  assert.deepEqual(a.pending, [])
})

test('garbage never crashes', () => {
  let seed = 7
  const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n }
  const s = new Session(B)
  for (let i = 0; i < 300; i++) {
    const b = Buffer.from(Array.from({ length: rnd(60) }, () => rnd(256)))
    try { axon.decode(b) } catch (e) { assert.ok(e instanceof AxonError, String(e)) }
    assert.ok(['dropped', 'respond'].includes(s.receive(b, 'bidirectional', i).action))
  }
})
