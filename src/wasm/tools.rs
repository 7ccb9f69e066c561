//! The Tools screen's calls on the reader's database: the console's own
//! reads, "export as is", import, "keep what is sound" and the article's scenario.
//! In the page's full module only: the worker hands the database over before
//! the first of them ([`Lab::release`]).

use sqlite_wasm_rs::vfs::transfer::DbTransfer;

use super::lab::{Lab, Storage};
use super::*;
use crate::core::schema;
use crate::labs::tools::{console, scenario, transfer};

#[wasm_bindgen]
impl Lab {
    /// Runs one read-only SQL statement: `{columns, rows, truncated}`. The
    /// page runs only settings pragmas here ([`super::reads_only_settings`]);
    /// every other query runs on a copy ([`Lab::snapshot`]) in a worker of
    /// its own.
    pub fn query(&mut self, sql: String) -> Result<JsValue, JsValue> {
        let conn = self.conn_mut()?;
        to_value(&console::query(conn, &sql)?)
    }

    /// The last, short step of an import: replaces the database with
    /// `rebuilt`, the bytes [`super::rebuild_import`] made of the file in
    /// the import worker (one write transaction).
    pub fn adopt(&mut self, rebuilt: Vec<u8>) -> Result<(), JsValue> {
        let conn = self.writer_mut()?;
        transfer::adopt(conn, &rebuilt)?;
        self.referee.forget(); // another database: credits it never watched
        Ok(())
    }

    /// Replaces the database with the rows of `bytes`, rebuilt in a fresh
    /// inbox-lab database (the file's own schema is never adopted); returns
    /// `{accounts, inbox, outbox, orders, version, ignored}`. A file that
    /// is not an intact inbox-lab database throws (field `file`) and
    /// changes nothing.
    pub fn import(&mut self, bytes: Vec<u8>) -> Result<JsValue, JsValue> {
        let conn = self.writer_mut()?;
        let imported = transfer::import(conn, &bytes)?;
        self.referee.forget(); // another database: credits it never watched
        to_value(&imported)
    }

    /// Runs the article's scenario on a fresh scratch database next to the
    /// reader's (which it leaves alone); returns `{summary, passed, checks}`.
    #[wasm_bindgen(js_name = runScenario)]
    pub fn run_scenario(&self) -> Result<JsValue, JsValue> {
        let name = format!("{}.scenario", self.name);
        let remove = || self.remove_database(&name);
        remove()?;
        let path = self.sibling_path(&name);
        let report = (|| {
            let mut conn = db::open(&path, db::Mode::Create, BUSY_TIMEOUT)?;
            schema::init(&mut conn, &[1])?;
            scenario::run(&conn, |e| {
                (0..scenario::BURST)
                    .map(|_| crate::apply(&conn, e, None))
                    .collect()
            })
        })()?;
        remove()?;
        to_value(&ScenarioAnswer {
            summary: report.summary(),
            passed: report.passed(),
            checks: report.checks,
        })
    }

    /// The stored database file exactly as it is, byte for byte: "export as
    /// is", the way to keep a database the page cannot use before resetting
    /// it. On OPFS the file is read from the pool untouched (SQLite does not
    /// open it); in memory there is no file, so it is the open database's
    /// `serialize` (nothing to export if it could not be created). With a
    /// healthy database open, this is what [`Lab::export`] gives.
    #[wasm_bindgen(js_name = exportRaw)]
    pub fn export_raw(&mut self) -> Result<Vec<u8>, JsValue> {
        if self.conn.is_some() {
            return self.export();
        }
        match &self.storage {
            Storage::Opfs(pool) => pool.export_db(&self.name).map_err(|e| {
                JsValue::from(Error::storage(format!(
                    "cannot read the stored database file {:?}: {e}",
                    self.name
                )))
            }),
            Storage::Memory => Err(JsValue::from(Error::storage(
                "there is no stored database to export: it is in memory and could not be created",
            ))),
        }
    }

    /// "Keep what is sound", for a stored database that cannot be used: its
    /// file is read as an import reads one ([`transfer::salvage`]: rows read
    /// from the tables, never through an index, each checked), except that a
    /// row that fails is left out and listed instead of refusing the file;
    /// then the database is reset and the rebuilt rows copied in. Returns
    /// `{kept: {accounts, inbox, outbox, orders, version, ignored}, dropped:
    /// [error object, …]}` — each row left out as the refusal an import would
    /// have answered for it. Throws (changing nothing) when nothing can be
    /// kept; export the file as is first to keep every byte.
    pub fn salvage(&mut self) -> Result<JsValue, JsValue> {
        let bytes = self.export_raw()?;
        let (fresh, salvaged) = transfer::salvage(&bytes)?;
        self.reset()?;
        let conn = self.conn_mut()?;
        transfer::copy_over(&fresh, conn)?;
        to_value(&salvaged)
    }
}

#[derive(Serialize)]
struct ScenarioAnswer {
    summary: String,
    passed: bool,
    checks: Vec<scenario::Check>,
}
