// Compiled (not run) by tests-js/types.test.js: the axon declarations
// type-check the API as the issue describes it.
import { decode, encode, agentId, agentIdFromSeed, negotiate, reply, errorEnvelope, envelope, Session, AxonError, KIND_RULES } from 'polywire/axon'
import type { Envelope, QueryPayload, Inbound, Pending, KindRule } from 'polywire/axon'
import { DaemonClient, AxonDaemonError, DaemonPeerNotFoundError, DaemonUnavailableError, DAEMON_ERROR_CODES } from 'polywire/axon'
import type { DaemonEnvelope, DaemonEvent, DaemonPeer, DaemonStatus, DaemonIdentity, DaemonErrorCode } from 'polywire/axon'

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

// The daemon client (never run: compiled only).
async function daemonSession(path: string): Promise<DaemonEvent[]> {
  const client = await DaemonClient.connect({ path, timeout: 5, maxEvents: 100 })
  const other = await DaemonClient.connect(DaemonClient.defaultPath())
  await other.close()
  try {
    const me: DaemonIdentity = await client.whoami()
    const status: DaemonStatus = await client.status()
    const peers: DaemonPeer[] = await client.peers()
    const agent: string = await client.addPeer('axon://6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw@127.0.0.1:7100')
    await client.addPeer({ pubkey: me.public_key, addr: '127.0.0.1:7101' })
    const reply: DaemonEnvelope = await client.send(agent, { question: 'hi' }, { timeoutSecs: 5 })
    const msgId: string = await client.send(agent, { data: 1 }, { kind: 'message', ref: reply.ref })
    const events: DaemonEvent[] = []
    for await (const event of client.events()) {
      events.push(event)
      if (event.event === 'pair_request' || events.length === 2) break
    }
    // @ts-expect-error: the kinds are 'request' and 'message'
    await client.send(agent, {}, { kind: 'notify' })
    // @ts-expect-error: a message takes no timeout
    await client.send(agent, {}, { kind: 'message', timeoutSecs: 5 })
    // @ts-expect-error: a message resolves to its id, not an envelope
    const wrong: DaemonEnvelope = await client.send(agent, {}, { kind: 'message' })
    const dropped: number = client.droppedEvents
    console.log(status.uptime_secs, peers.length, msgId, dropped, wrong)
    return events
  } catch (err) {
    if (err instanceof DaemonPeerNotFoundError || err instanceof DaemonUnavailableError) console.log(err.code)
    if (err instanceof AxonDaemonError && err instanceof AxonError) console.log(err.message)
    throw err
  } finally {
    await client[Symbol.asyncDispose]()
  }
}
const codes: readonly DaemonErrorCode[] = DAEMON_ERROR_CODES
console.log(daemonSession, codes)
