//! The facade for signed webhooks ([`crate::labs::webhooks`]): the
//! sources' secrets, and receiving a webhook the server relayed
//! (`www/panels/hooks/`). Converts only.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use rusqlite::Connection;
use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::{number_from_js, string_from_js, to_value, Lab, BUSY_TIMEOUT};
use crate::core::db::{self, Mode};
use crate::labs::webhooks::{self, fields, store, Check, Request, Secret};
use crate::{Error, Field};

/// A relayed webhook as the server sends it (`xtask/src/serve.rs`):
/// `{id, source, headers: {"webhook-id", ...}, body_base64}`.
#[derive(Deserialize)]
struct Relayed {
    source: String,
    #[serde(default)]
    headers: std::collections::HashMap<String, String>,
    body_base64: String,
}

#[derive(Serialize)]
struct SecretAnswer {
    source: String,
    secret: String,
}

#[wasm_bindgen]
impl Lab {
    /// The current secret of `source` (`{source, secret: "whsec_..."}`),
    /// made from `fresh_key` (random bytes the page drew with
    /// `crypto.getRandomValues`) when the source has none yet.
    #[wasm_bindgen(js_name = hookSecret)]
    pub fn hook_secret(&mut self, source: JsValue, fresh_key: Vec<u8>) -> Result<JsValue, JsValue> {
        self.secret_call(&source, &fresh_key, store::current)
    }

    /// Rotates the secret of `source` to one made from `fresh_key`; the old
    /// one keeps verifying until the next rotation. Answers like
    /// [`Lab::hook_secret`].
    #[wasm_bindgen(js_name = hookRotate)]
    pub fn hook_rotate(&mut self, source: JsValue, fresh_key: Vec<u8>) -> Result<JsValue, JsValue> {
        self.secret_call(&source, &fresh_key, store::rotate)
    }

    /// Signs `body` (text) as `source`'s current secret would, for
    /// `webhook-id` `id` at `timestamp` (seconds): `"v1,<base64>"`. The page
    /// plays the genuine provider with it.
    #[wasm_bindgen(js_name = hookSign)]
    pub fn hook_sign(
        &mut self,
        source: JsValue,
        id: JsValue,
        timestamp: JsValue,
        body: JsValue,
    ) -> Result<String, JsValue> {
        let source = string_from_js(Field::SOURCE, &source)?;
        let id = string_from_js(fields::WEBHOOK_ID, &id)?;
        let body = string_from_js(fields::BODY, &body)?;
        let timestamp = number_from_js(fields::WEBHOOK_TIMESTAMP, &timestamp)?;
        let secrets = store::secrets(self.hooks()?, &source)?;
        let Some((_, secret)) = secrets.first() else {
            return Err(
                Error::invalid(Field::SOURCE, format!("{source:?} has no secret yet")).into(),
            );
        };
        Ok(webhooks::sign(secret, &id, timestamp, body.as_bytes()))
    }

    /// Forgets every source's secrets: deletes their database, whatever it
    /// holds (also when it is damaged and every secret call fails). Senders
    /// signing with them get 401 from now on; the next `hookSecret` makes a
    /// new one. The inbox database is not touched.
    #[wasm_bindgen(js_name = hookForget)]
    pub fn hook_forget(&mut self) -> Result<(), JsValue> {
        self.hooks = None; // closes the connection first
        Ok(self.remove_database(store::FILE)?)
    }

    /// Receives a webhook the server relayed: verifies it against its
    /// source's secrets (unless `verify` is `false`: the mistake, to show
    /// why) at the browser's clock, then delivers it with the atomic
    /// handler. Returns `{status, body, event, steps}`: the status and JSON
    /// body for the sender, the event that reached the handler (or null)
    /// and the steps it ran.
    #[wasm_bindgen(js_name = hookReceive)]
    pub fn hook_receive(&mut self, relayed: JsValue, verify: JsValue) -> Result<JsValue, JsValue> {
        let relayed: Relayed = serde_wasm_bindgen::from_value(relayed)
            .map_err(|e| Error::invalid(fields::BODY, format!("not a relayed webhook: {e}")))?;
        let check = match verify.as_bool() {
            Some(false) => Check::Nothing,
            _ => Check::Signature,
        };
        let body = STANDARD
            .decode(relayed.body_base64.as_bytes())
            .map_err(|e| Error::invalid(fields::BODY, format!("body_base64 is not base64: {e}")))?;
        let header = |name: &str| relayed.headers.get(name).map(String::as_str);
        let request = Request {
            source: &relayed.source,
            id: header("webhook-id"),
            timestamp: header("webhook-timestamp"),
            signature: header("webhook-signature"),
            body: &body,
        };
        let secrets = store::secrets(self.hooks()?, &relayed.source)?;
        let now = (js_sys::Date::now() / 1000.0).floor() as i64;
        let received = webhooks::receive(self.writer()?, &secrets, &request, now, check);
        to_value(&received)
    }
}

impl Lab {
    /// `{source, secret}` from `call` (`store::current` or `store::rotate`)
    /// on the secrets' database.
    fn secret_call(
        &mut self,
        source: &JsValue,
        fresh_key: &[u8],
        call: fn(&Connection, &str, &[u8]) -> Result<Secret, Error>,
    ) -> Result<JsValue, JsValue> {
        let source = string_from_js(Field::SOURCE, source)?;
        let secret = call(self.hooks()?, &source, fresh_key)?;
        to_value(&SecretAnswer {
            source,
            secret: secret.to_whsec(),
        })
    }

    /// The secrets' database, opened (and its table made) on first use.
    fn hooks(&mut self) -> Result<&Connection, Error> {
        if self.hooks.is_none() {
            let conn = db::open(&self.sibling_path(store::FILE), Mode::Create, BUSY_TIMEOUT)?;
            store::prepare(&conn)?;
            self.hooks = Some(conn);
        }
        self.hooks
            .as_ref()
            .ok_or_else(|| Error::storage("the secrets' database is closed"))
    }
}
