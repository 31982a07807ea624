// Compiled (not run) by tests-js/types.test.js: the tether declarations
// type-check the API as the issue describes it.
import { encode, decode, decodeAnswer, encodeMessageSend, decodeMessageSend, encodeAnswer, toHex, fromHex, toolArguments, readToolResult, TetherSymbol, TetherProxy, TetherUuid, TetherError } from 'polywire/tether'
import type { TetherValue, MessageSend, Answer, ToolArguments } from 'polywire/tether'

const bytes: Uint8Array = encode([3, 'hello', null, true, new TetherSymbol('+'), new Uint8Array([1]), new TetherProxy(42), new TetherUuid('6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1'), 5n])
const value: TetherValue = decode(bytes, { latin1: true })
const send: Uint8Array = encodeMessageSend(new TetherProxy(42), 'at:put:', [1, 'x'], { uuid: '6fc0ec4f-e59f-4bea-9d57-0d9fdd1108f1' })
const m: MessageSend = decodeMessageSend(send)
const receiver: number = m.receiver
const a: Answer = decodeAnswer(encodeAnswer(7, { uuid: m.uuid }))
const u: string | null = a.uuid
const hex: string = toHex(fromHex('40000003'))
const args: ToolArguments = toolArguments(3, '+', [4])
const seven: TetherValue = readToolResult({ result: '40000007' })
try {
  encode(-1)
} catch (e) {
  if (e instanceof TetherError) console.log(e.code, e.offset)
}
console.log(value, receiver, u, hex, args.arguments, seven)
