'use strict'
// The seeded TOON document generator of the differential tests (shared by
// toon_differential.test.js and toon_stream_differential.test.js):
// `generator(seed)` gives `document()` (a random value: adversarial strings
// and keys, number edge cases, tabular / keyed / nested-field-group
// candidates), `mutate(text)` (one to three random edits of TOON text),
// `pick(array)` and `int(n)`, all drawn from one seeded stream.

// mulberry32
function rng(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const ADVERSARIAL = [
  '', ' ', '  a', 'a ', ' padded ', 'true', 'false', 'null', 'True', 'NULL', '0', '-0', '05', '007', '1e5', '-1.5E-3', '+1',
  '.5', '1.', '1e', '1e+', '0x1F', 'Infinity', 'NaN', '1_000', '3.14', '-', '--', '- item', '-x', '-1', 'a,b', 'a|b',
  'a\tb', 'a:b', ':', 'a: b', '"', 'say "hi"', '\\', 'back\\slash', '[x]', '[2]', '[2]: 1', '{y}', '[]', '{}', '#', '#tag',
  ' #x', 'x#', 'a\nb', 'a\r\nb', '\r', '\u0000', '\u0001\u001f', '\u007f', '\u0085', 'é', '日本語', '😀', 'ℕ', '\uFEFF',
  '\uFEFFx', 'x\uFEFF', '\u2028', '\u00a0', 'a  b', 'null ', ' true', 'k: v', 'a.b', '__proto__', 'constructor', '- - -',
]
const KEYS = [
  'a', 'b', 'c', 'id', 'name', 'x_1', '_p', 'A9', 'a.b', 'a.b.c', '.a', 'a.', '1', '01', '10', '2', '4294967294',
  '4294967295', '', ' ', 'k k', 'k:v', 'k,v', 'k|v', 'k\tv', '"q"', '[k]', '{k}', 'k[2]', '-k', '#k', 'é', 'true', 'null',
  '0', '-1', '1.5', '__proto__', 'constructor', 'a\nb', '\uFEFFk', 'ключ', 'k#', 'k-', '😀',
]
const NUMBERS = [
  0, -0, 1, -1, 2, 10, 0.1, 0.5, -2.5, 100, 3.14159, 1e21, 1e20, 1e-7, 1e-6, 123456789, 2 ** 31, 2 ** 32, 2 ** 53, 2 ** 53 + 2,
  -(2 ** 53), Number.MAX_SAFE_INTEGER, Number.MIN_VALUE, Number.MAX_VALUE, 5e-324, NaN, Infinity, -Infinity, 0.1 + 0.2,
  2 ** 64, 1e100, -1e-10, 1.5e300, 4.35, 0.000001, 999999999999999900000,
]
const ALPHABET = 'abcxyz019 ,|\t:"\\-#[]{}.\n\r\u0001é日😀\uFEFF'

function generator(seed) {
  const r = rng(seed)
  const int = (n) => Math.floor(r() * n)
  const pick = (a) => a[int(a.length)]
  const chance = (p) => r() < p

  function str() {
    switch (int(5)) {
      case 0:
      case 1:
        return pick(ADVERSARIAL)
      case 2:
        return pick(ADVERSARIAL) + pick(ADVERSARIAL)
      case 3: {
        let s = ''
        for (let n = int(8); n > 0; n--) s += pick([...ALPHABET])
        return s
      }
      default:
        return pick(['alpha', 'Ada Lovelace', 'hello world', 'x', 'yes', 'no', 'item-1', 'v2.0', 'path/to', 'a_b'])
    }
  }
  function num() {
    switch (int(4)) {
      case 0:
        return pick(NUMBERS)
      case 1:
        return int(2000) - 1000
      case 2:
        return (r() - 0.5) * 10 ** (int(40) - 20)
      default:
        return Math.round(r() * 1e6) / 1e3
    }
  }
  function prim() {
    switch (int(7)) {
      case 0:
      case 1:
      case 2:
        return str()
      case 3:
      case 4:
        return num()
      case 5:
        return chance(0.5)
      default:
        return null
    }
  }
  function key() {
    return chance(0.55) ? pick(['id', 'name', 'a', 'b', 'value', 'tags', 'x', 'y', 'meta']) : pick(KEYS)
  }
  function keys(n) {
    const out = []
    while (out.length < n) {
      const k = key()
      if (!out.includes(k)) out.push(k)
    }
    return out
  }
  // A uniform object (a row): primitive cells, maybe nested field groups.
  function shape(depth) {
    return keys(1 + int(4)).map((k) => [k, depth < 2 && chance(0.2) ? shape(depth + 1) : null])
  }
  function row(sh) {
    const o = {}
    const entries = chance(0.15) ? [...sh].reverse() : sh
    for (const [k, sub] of entries) o[k] = sub ? row(sub) : prim()
    return o
  }
  function table() {
    const sh = shape(0)
    const rows = Array.from({ length: 1 + int(5) }, () => row(sh))
    if (chance(0.15)) {
      // Break uniformity: a missing key, an extra key or a container cell.
      const o = rows[int(rows.length)]
      const k = Object.keys(o)[0]
      switch (int(3)) {
        case 0:
          delete o[k]
          break
        case 1:
          o[key() + '_extra'] = prim()
          break
        default:
          o[k] = chance(0.5) ? [prim()] : {}
      }
    }
    return rows
  }
  function keyed() {
    const sh = shape(0)
    const o = {}
    for (const k of keys(2 + int(3))) o[k] = row(sh)
    return o
  }
  function value(depth) {
    if (depth > 4) return prim()
    switch (int(10)) {
      case 0:
      case 1:
        return prim()
      case 2:
        return Array.from({ length: int(6) }, prim)
      case 3:
        return table()
      case 4:
        return keyed()
      case 5:
        return Array.from({ length: 1 + int(3) }, () => Array.from({ length: int(4) }, prim))
      case 6:
        return Array.from({ length: int(5) }, () => value(depth + 1))
      case 7:
        return chance(0.3) ? {} : { [key()]: value(depth + 1) }
      default:
        return object(depth + 1)
    }
  }
  function object(depth) {
    const o = {}
    for (const k of keys(int(5))) o[k] = value(depth)
    return o
  }
  function document() {
    const root = int(10)
    if (root === 0) return prim()
    if (root === 1) return value(1)
    if (root === 2) return table()
    return object(0)
  }
  const MUTATION_CHARS = [' ', '  ', ',', '|', '\t', ':', '"', '-', '- ', '[', ']', '{', '}', '\n', '#', '\\', '0', '9', 'x', '\r']
  function mutate(text) {
    let t = text
    for (let n = 1 + int(3); n > 0; n--) {
      const lines = t.split('\n')
      const i = int(lines.length)
      switch (int(10)) {
        case 0: // delete a character
        case 1: {
          const p = int(t.length + 1)
          t = t.slice(0, p) + t.slice(p + 1)
          break
        }
        case 2: // insert a character
        case 3: {
          const p = int(t.length + 1)
          t = t.slice(0, p) + pick(MUTATION_CHARS) + t.slice(p)
          break
        }
        case 4: // duplicate a line
          lines.splice(i, 0, lines[i])
          t = lines.join('\n')
          break
        case 5: // delete a line
          lines.splice(i, 1)
          t = lines.join('\n')
          break
        case 6: // re-indent a line
          lines[i] = chance(0.5) ? ' '.repeat(1 + int(3)) + lines[i] : lines[i].replace(/^ {1,3}/, '')
          t = lines.join('\n')
          break
        case 7: // change a declared length
          t = t.replace(/\[(\d+)/, (_, d) => `[${Math.max(0, Number(d) + pick([-1, 1, 2, 100]))}`)
          break
        case 8: // a blank line
          lines.splice(i, 0, pick(['', '  ', '\t']))
          t = lines.join('\n')
          break
        default: {
          // swap two lines
          const j = int(lines.length)
          ;[lines[i], lines[j]] = [lines[j], lines[i]]
          t = lines.join('\n')
        }
      }
    }
    return t
  }
  return { document, mutate, pick, int }
}

module.exports = { rng, generator }
