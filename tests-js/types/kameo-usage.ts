// Compiled (not run) by tests-js/types.test.js: the kameo declarations
// type-check the API as the issue describes it.
import { encodeRequest, decodeRequest, encodeResponse, decodeResponse, encodeRegistration, decodeRegistration, metadataKey, providerKey, peerIdFromPublicKey, remoteMessageId, pack, unpack, ask, tell, actorId, MESSAGING_PROTOCOL, KameoError } from 'polywire/kameo'
import * as kameo from 'polywire/kameo'
import type { SwarmRequest, SwarmResponse, Registration, ActorId } from 'polywire/kameo'

const peer: string = peerIdFromPublicKey(new Uint8Array(32))
const id: ActorId = actorId(42n, peer)
const payload: Uint8Array = pack({ amount: 5 })
const req: SwarmRequest = ask(id, 'counter', 'inc', payload, { mailboxTimeout: 1.5, replyTimeout: { secs: 5, nanos: 0 } })
const bytes: Uint8Array = encodeRequest(req)
const back: SwarmRequest = decodeRequest(bytes)
const told: Uint8Array = encodeRequest(tell(7, 'counter', 'inc', payload))
const resp: SwarmResponse = { Ask: { Err: { UnknownActor: { actor_remote_id: 'x' } } } }
const decoded: SwarmResponse = decodeResponse(encodeResponse(resp))
const mailboxFull: SwarmResponse = { Tell: { Err: 'MailboxFull' } }
const reg: Registration = decodeRegistration(encodeRegistration(1, peer, 'counter'))
const key: string = metadataKey('counter', peer)
const provider: Uint8Array = providerKey('counter')
const msgId: string = remoteMessageId('my-app', 0, 'my_app::actors', 'Inc', 'Counter')
try {
  decodeRequest(new Uint8Array([0xa1]))
} catch (e) {
  if (e instanceof KameoError) console.log(e.code, e.offset)
}
console.log(MESSAGING_PROTOCOL, back, told, decoded, mailboxFull, reg.sequence_id, key, provider, msgId, unpack(payload))

// ---- the peer
async function peerUsage(): Promise<void> {
  const node: kameo.Node = await kameo.Node.start({ listen: ['/ip4/127.0.0.1/tcp/0'], requestTimeout: 5, keypairSeed: new Uint8Array(32) })
  const id: string = node.peerId
  const addrs: string[] = node.listenAddrs
  const me: kameo.RemoteActorRef = await node.register('me', { ask: (m: string, v: unknown) => v }, { remoteId: 'my.Actor' })
  await node.register('fn', async (m: string, v: unknown) => ({ m, v }), { remoteId: 'my.Actor', raw: false })
  const found: kameo.RemoteActorRef | null = await node.lookup('me')
  for await (const ref of node.lookupAll('me')) {
    const reply: unknown = await ref.ask('inc', { amount: 1 }, { replyTimeout: 1.5, immediate: false })
    await ref.tell('inc', { amount: 1 })
    const peer: string | null = ref.peerId
    const remoteId: string = ref.remoteId
    void [reply, peer, remoteId]
  }
  try {
    await me.ask('x')
  } catch (e) {
    if (e instanceof kameo.HandlerError) {
      const v: unknown = e.value
      void v
    } else if (e instanceof kameo.KameoRemoteError) {
      const code: string = e.code
      const variant: string | null = e.variant
      void [code, variant]
    }
  }
  const known: boolean = await node.unregister('me')
  await node.close()
  // @ts-expect-error - nodes come from Node.start
  new kameo.Node()
  // @ts-expect-error - register needs the remote id
  await node.register('x', () => 1)
  void [id, addrs, found, known]
}
void peerUsage
