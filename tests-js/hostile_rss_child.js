'use strict'
// Child process of hostile.test.js: runs one allocation pattern in a
// synchronous loop (no event-loop turn) and prints the RSS growth in MB as
// JSON. Run with --expose-gc. Usage: node --expose-gc hostile_rss_child.js <pattern> <count>
//
// Patterns:
//   frame-decoder  a FrameDecoder fed one frame, per iteration
//   kameo-pack     kameo.pack of a small value
//   kado-buffers   kado encode, encodeHeader, compress, decompress, decodeRaw
//   axon-key       axon.publicKeyFromSeed
//   toon-instance  a fresh instance of polywire/toon (require cache cleared)
//                  encoding and decoding a document with many keys
const path = require('node:path')
const dir = process.env.POLYWIRE_NODE_DIR || path.dirname(require.resolve('polywire/kado'))
const [pattern, countArg] = process.argv.slice(2)
const count = Number(countArg)

function rssMb() {
  globalThis.gc?.()
  globalThis.gc?.()
  return process.memoryUsage().rss / 2 ** 20
}

function toonDoc(i) {
  const o = {}
  // Many distinct keys: they fill the instance's key tables.
  for (let k = 0; k < 400; k++) o[`key_${k}_${i % 7}`] = k
  return { rows: [o, o], name: 'x' }
}

let step
switch (pattern) {
  case 'frame-decoder': {
    const kado = require(path.join(dir, 'kado.js'))
    const frame = new kado.TOONEncoder().encode(1, { hello: 'world', n: [1, 2, 3] }, 1, 0)
    step = () => {
      const fd = new kado.FrameDecoder()
      if (fd.feed(frame).length !== 1) throw new Error('no frame')
    }
    break
  }
  case 'kameo-pack': {
    const kameo = require(path.join(dir, 'kameo.js'))
    const v = { a: 1, b: 'two', c: [1, 2, 3], d: new Uint8Array(200) }
    step = () => kameo.pack(v)
    break
  }
  case 'kado-buffers': {
    const kado = require(path.join(dir, 'kado.js'))
    const enc = new kado.TOONEncoder()
    const dec = new kado.TOONDecoder()
    const big = Buffer.alloc(2048, 0x61)
    const frame = enc.encode(1, { s: 'a'.repeat(2000) }, 1, 0)
    step = () => {
      enc.encodeHeader({ version: 1, type: 1, payloadLength: 3, sequenceId: 1, timestamp: 0 })
      kado.decompress(kado.compress(big))
      dec.decodeRaw(frame)
    }
    break
  }
  case 'axon-key': {
    const axon = require(path.join(dir, 'axon.js'))
    const seed = Buffer.alloc(32, 7)
    step = () => axon.publicKeyFromSeed(seed)
    break
  }
  case 'toon-instance': {
    const file = require.resolve(path.join(dir, 'toon.js'))
    let i = 0
    step = () => {
      delete require.cache[file]
      const toon = require(file)
      // As a test runner or hot reload does: the old instance is kept by
      // nothing (Node would otherwise keep every one in module.children).
      module.children.length = 0
      const doc = toonDoc(i++)
      if (JSON.stringify(toon.decode(toon.encode(doc))) !== JSON.stringify(doc)) throw new Error('round trip')
    }
    break
  }
  default:
    throw new Error(`unknown pattern ${pattern}`)
}

// Warm up (code, pools, the first tables), then measure.
// (Fresh module instances warm up longer: V8 grows its heap and code space
// to a steady state first.)
const warm = pattern === 'toon-instance' ? count : Math.min(1000, count / 10)
for (let i = 0; i < warm; i++) step()
// Then 2 x count steps with 8 RSS samples in each half. Garbage makes RSS
// swing by +-15 MB either way from one sample to the next (V8 gives pages
// back and takes them again); a leak only climbs. The growth is the median
// of the second half's samples minus the first half's, which are count steps
// apart on average: a leak shows in full, a swing in neither median.
const samples = []
const every = Math.max(1, Math.floor(count / 8))
for (let i = 1; i <= 2 * count; i++) {
  step()
  if (i % every === 0) samples.push(rssMb())
}
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}
const half = Math.floor(samples.length / 2)
const before = median(samples.slice(0, half))
const after = median(samples.slice(half))
process.stdout.write(JSON.stringify({ pattern, count, before: Math.round(before), after: Math.round(after), growth: Math.round(after - before) }) + '\n')
