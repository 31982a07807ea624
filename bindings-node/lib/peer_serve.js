'use strict'

// What the AXON peer (axon.js) and the Kameo node (kameo.js) share: taking
// the requests their native peer receives and answering each with what the
// program's handler returns. Nothing a handler throws, returns or rejects with
// (a value String() cannot convert, an Error whose getters throw, a revoked
// Proxy, a thenable whose `then` throws) may reach the peer's loop or become
// an unhandled rejection: every failure is the caller's error reply.

/** Serve the requests `native.nextInbound()` resolves to, each with
 * `serve(req)`, until it rejects or resolves to null (the peer closed). */
async function serveInbound(native, serve) {
  for (;;) {
    let req
    try {
      req = await native.nextInbound()
    } catch {
      return
    }
    if (req === null) return
    serve(req)
  }
}

/** Answer `req` with `answer(req, result)` of what `call()` (the handler)
 * returns, once settled when it is a thenable; `failSafely(req, err)` turns a
 * failure into the error reply and never throws. */
function runHandler(req, call, answer, failSafely) {
  let result
  try {
    result = call()
  } catch (err) {
    return failSafely(req, err)
  }
  let then
  try {
    then = result !== null && (typeof result === 'object' || typeof result === 'function') ? result.then : undefined
  } catch (err) {
    return failSafely(req, err)
  }
  const answerSafely = (v) => {
    try {
      answer(req, v)
    } catch (err) {
      failSafely(req, err)
    }
  }
  if (typeof then === 'function') {
    new Promise((resolve, reject) => then.call(result, resolve, reject)).then(answerSafely, (err) => failSafely(req, err))
  } else {
    answerSafely(result)
  }
}

/** The text of a thrown value: an Error's message (or name), else
 * String(value), else a fixed text; never throws. */
function thrownText(err) {
  try {
    if (err instanceof Error) {
      const message = err.message
      if (typeof message === 'string' && message) return message
      const name = err.name
      if (typeof name === 'string' && name) return name
    }
  } catch {}
  try {
    return String(err)
  } catch {}
  try {
    return Object.prototype.toString.call(err)
  } catch {}
  return 'the handler threw a value that cannot be converted to a string'
}

module.exports = { serveInbound, runHandler, thrownText }
