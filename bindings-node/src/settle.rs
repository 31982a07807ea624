//! Promises settled from a network peer's own thread (`kameo_peer.rs`,
//! `axon_peer.rs`): each operation returns a Promise whose `JsDeferred` the
//! peer's task settles, so nothing blocks the event loop.

use napi::bindgen_prelude::*;
use napi::{Env, JsDeferred};

type Resolver<T> = Box<dyn FnOnce(Env) -> Result<T> + Send>;

/// Settles a Promise exactly once: with the value given to [`Settle::done`],
/// or, if dropped first (the peer closed and dropped the waiting task), with
/// the `closed` value, so no Promise stays pending forever.
pub(crate) struct Settle<T: ToNapiValue + Send + 'static> {
    deferred: Option<JsDeferred<T, Resolver<T>>>,
    closed: fn() -> T,
}

impl<T: ToNapiValue + Send + 'static> Settle<T> {
    pub(crate) fn new(env: &Env, closed: fn() -> T) -> Result<(Settle<T>, Object<'_>)> {
        let (deferred, promise) = env.create_deferred::<T, Resolver<T>>()?;
        Ok((Settle { deferred: Some(deferred), closed }, promise))
    }

    pub(crate) fn done(mut self, value: T) {
        if let Some(d) = self.deferred.take() {
            d.resolve(Box::new(move |_| Ok(value)));
        }
    }
}

impl<T: ToNapiValue + Send + 'static> Drop for Settle<T> {
    fn drop(&mut self) {
        if let Some(d) = self.deferred.take() {
            let value = (self.closed)();
            d.resolve(Box::new(move |_| Ok(value)));
        }
    }
}
