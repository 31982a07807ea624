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
