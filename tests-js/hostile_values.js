'use strict'
// Values shared by the hostile-input tests (hostile.test.js,
// arguments.test.js): errors the caller's own code throws are `Sentinel`s,
// so a test can tell them from polywire's.

/** The caller's own code threw this (a getter, toString, a Proxy trap): exempt. */
class Sentinel extends Error {}

/** An object whose every Proxy trap throws a Sentinel. */
const throwingProxy = () =>
  new Proxy(
    { a: 1 },
    {
      get() {
        throw new Sentinel('get trap')
      },
      ownKeys() {
        throw new Sentinel('ownKeys trap')
      },
      getOwnPropertyDescriptor() {
        throw new Sentinel('descriptor trap')
      },
      getPrototypeOf() {
        throw new Sentinel('prototype trap')
      },
      has() {
        throw new Sentinel('has trap')
      },
    },
  )

module.exports = { Sentinel, throwingProxy }
