// Compiled (not run) by tests-js/types.test.js: the axon declarations
// type-check the API as the issue describes it.
import { decode, encode, agentId, agentIdFromSeed, negotiate, reply, errorEnvelope, envelope, Session, AxonError, KIND_RULES } from 'polywire/axon'
import type { Envelope, QueryPayload, Inbound, Pending, KindRule } from 'polywire/axon'

const me = agentIdFromSeed(new Uint8Array(32))
const peer: string = agentId(new Uint8Array(32))
const q: Envelope<'query'> = envelope(me, peer, 'query', { question: 'Who is home?', max_tokens: 0 })
const p: QueryPayload = q.payload
const r = reply(q, 'response', { data: { who: ['Alice'] }, summary: 'Alice is home.' })
const e: Envelope<'error'> = errorEnvelope(q, 'unknown_domain', 'Try the work agent instead.', { retryable: false })
const body: Uint8Array = encode(r)
const back = decode(body)
if (back.kind === 'response') {
  const summary: string = back.payload.summary
  console.log(summary)
}
const v: number = negotiate([1, 2], [1])
const s = new Session(me, { protocolVersions: [1], expectedPeer: peer })
const hello = s.hello(peer, Date.now())
const got: Inbound = s.receive(hello.bytes, 'bidirectional', Date.now())
if (got.action === 'dropped') console.log(got.reason)
const pending: Pending[] = s.pending
const rule: KindRule = KIND_RULES.delegate
try {
  decode('{}')
} catch (err) {
  if (err instanceof AxonError) console.log(err.code)
}
console.log(p, e, v, pending, rule.responseKinds)
