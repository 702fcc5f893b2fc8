//! JavaScript functions registered as hooks: each is a library
//! [`CallbackHook`] calling back into the event loop. `index.js` makes
//! every function async (a throw is a rejection) and `undefined` `null`,
//! so the addon always awaits a promise of JSON.

use std::sync::Arc;

use napi::bindgen_prelude::Promise;
use napi::threadsafe_function::ThreadsafeFunction;
use serde_json::{Map, Value};
use wasm_hooks::CallbackHook;

/// A JavaScript `async (value) => value` the engine may call from any
/// thread; it does not keep the process alive.
pub(crate) type JsFunction =
    ThreadsafeFunction<Value, Promise<Value>, Value, napi::Status, false, true>;

/// Call `function` with `argument` and await its promise.
///
/// # Errors
/// What it threw or rejected with.
pub(crate) async fn call(function: &JsFunction, argument: Value) -> Result<Value, String> {
    let promise = function
        .call_async_catch(argument)
        .await
        .map_err(|e| e.reason.clone())?;
    promise.await.map_err(|e| e.reason.clone())
}

/// A hook calling `function`, named `label` in traces.
pub(crate) fn function_hook(function: JsFunction, label: String) -> CallbackHook {
    let function = Arc::new(function);
    CallbackHook::new(label, move |record| {
        let (function, record) = (Arc::clone(&function), Value::Object(Map::clone(record)));
        Box::pin(async move {
            let answer = call(&function, record).await?;
            Ok(Some(answer).filter(|a| !a.is_null()))
        })
    })
}
