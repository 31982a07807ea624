// Compiled (not run) by tests-js/types.test.js: the published declarations
// must type-check code written against the upstream orchestrator API.
import { TOONEncoder, TOONDecoder, FrameDecoder, MessageType, compress, decompress, isCompressed, KadoError, HEADER_SIZE } from 'polywire/kado'
import type { TOONHeader, TOONMessage } from 'polywire/kado'
import * as polywire from 'polywire'

const enc = new TOONEncoder()
const frame: Uint8Array = enc.encode(MessageType.TOOL_CALL, { toolName: 'x', args: {} }, 1)
const msg: TOONMessage<{ toolName: string }> = new TOONDecoder().decode<{ toolName: string }>(frame)
const header: TOONHeader = msg.header
const name: string = msg.payload.toolName
const n: number = header.payloadLength + header.sequenceId + header.timestamp + HEADER_SIZE
const packed: Uint8Array = compress(decompress(frame))
const flag: boolean = isCompressed(packed)
const fd = new FrameDecoder({ maxFrameSize: 1024 })
const out = fd.feed(frame)
const parsed: TOONMessage[] = out
// With raw: true the messages' payloads are bytes, typed without a cast.
const rawBytes: Uint8Array[] = new FrameDecoder({ raw: true }).feed(frame).map((m) => m.payload)
// @ts-expect-error: a parsing decoder's messages are not raw ones
const notRaw: Uint8Array = new FrameDecoder().feed(frame)[0].payload
console.log(parsed.length, rawBytes.length, notRaw)
fd.finish()
try {
  TOONEncoder.encodeStatus('ok', 0.5, n)
} catch (e) {
  if (e instanceof KadoError) {
    const code: string = e.code
    const offset: number | null = e.offset
    console.log(code, offset, name, flag, out.length)
  }
}
const k: typeof polywire.kado.TOONEncoder = polywire.kado.TOONEncoder
console.log(k, polywire.PolywireError)
// Decompressing calls take a bound on the decompressed payload.
const bounded: Uint8Array = decompress(packed, { maxSize: 1 << 20 })
const dec2 = new TOONDecoder()
const m2 = dec2.decode(frame, { maxSize: 4096 })
const r2 = dec2.decodeRaw(frame, { maxSize: 4096 })
console.log(bounded.length, m2.header.type, r2.payload.length, dec2.decodePayload(r2.payload, MessageType.STATUS, { maxSize: 10 }))
