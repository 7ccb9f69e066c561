//! The receiver's state: the balance the probe reads after each scenario.
//!
//! An answer is what a receiver *says*; the balance is what it *did*. Two
//! "200 applied" answers to one event can hide one credit or two, and a
//! "200" to the genuine event after a forgery can hide none. So with
//! `--state` the probe reads the balance before and after every scenario;
//! without it, it judges the answers alone and says so.

use std::time::Duration;

use rusqlite::OpenFlags;

/// Where the balance is read.
pub(crate) enum State {
    /// Not given: the answers alone are judged.
    Unseen,
    /// A SQLite file, opened read-only for each read.
    Sqlite { path: String, sql: String },
    /// A PostgreSQL database, through the `postgres` client crate.
    Postgres {
        client: Box<postgres::Client>,
        sql: String,
    },
    /// A URL answering GET with the balance.
    Url { target: String, timeout: Duration },
}

impl State {
    /// Opens the state the arguments name and reads it once, so a wrong
    /// path, URL or query is reported before anything is sent.
    ///
    /// # Errors
    /// A message naming the argument and what is wrong with it.
    pub fn open(
        state: Option<&str>,
        balance_sql: Option<&str>,
        state_url: Option<&str>,
        account: i64,
        allow_remote: bool,
        timeout: Duration,
    ) -> Result<State, String> {
        let sql = balance_sql.map_or_else(
            || format!("SELECT balance FROM accounts WHERE id = {account}"),
            str::to_owned,
        );
        let mut opened = match (state, state_url) {
            (None, None) => return Ok(State::Unseen),
            (_, Some(url)) => {
                super::Target::parse(url, allow_remote).map_err(|e| format!("--state-url {e}"))?;
                State::Url {
                    target: url.to_owned(),
                    timeout,
                }
            }
            (Some(spec), None) => {
                if let Some(path) = spec.strip_prefix("sqlite:") {
                    if !std::path::Path::new(path).is_file() {
                        return Err(format!("--state {spec}: no such file"));
                    }
                    State::Sqlite {
                        path: path.to_owned(),
                        sql,
                    }
                } else if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
                    State::Postgres {
                        client: Box::new(connect_postgres(spec, timeout)?),
                        sql,
                    }
                } else {
                    return Err(format!(
                        "--state {spec}: expected sqlite:FILE or postgres://user@host:port/db"
                    ));
                }
            }
        };
        opened
            .balance()
            .map_err(|e| format!("cannot read the receiver's state: {e}"))?;
        Ok(opened)
    }

    /// Where the balance comes from, for the report (no password shown).
    pub(crate) fn describe(&self) -> String {
        match self {
            State::Unseen => "not given: answers only, the effect is not seen".into(),
            State::Sqlite { path, sql } => format!("sqlite:{path} ({sql})"),
            State::Postgres { sql, .. } => format!("PostgreSQL ({sql})"),
            State::Url { target, .. } => format!("GET {target}"),
        }
    }

    /// The balance now; `Ok(None)` when no state was given.
    ///
    /// # Errors
    /// The reason the balance could not be read.
    pub fn balance(&mut self) -> Result<Option<i64>, String> {
        match self {
            State::Unseen => Ok(None),
            State::Sqlite { path, sql } => {
                let conn =
                    rusqlite::Connection::open_with_flags(&*path, OpenFlags::SQLITE_OPEN_READ_ONLY)
                        .map_err(|e| format!("sqlite:{path}: {e}"))?;
                conn.busy_timeout(Duration::from_secs(5))
                    .and_then(|()| conn.query_row(sql, [], |row| row.get::<_, i64>(0)))
                    .map(Some)
                    .map_err(|e| format!("{sql}: {e} (it must return one integer)"))
            }
            State::Postgres { client, sql } => {
                let row = client
                    .query_one(sql.as_str(), &[])
                    .map_err(|e| format!("{sql}: {e}"))?;
                row.try_get::<_, i64>(0)
                    .or_else(|_| row.try_get::<_, i32>(0).map(i64::from))
                    .map(Some)
                    .map_err(|e| format!("{sql}: {e} (cast it: SELECT balance::bigint ...)"))
            }
            State::Url { target, timeout } => balance_from_url(target, *timeout).map(Some),
        }
    }
}

fn connect_postgres(url: &str, timeout: Duration) -> Result<postgres::Client, String> {
    let mut config: postgres::Config = url.parse().map_err(|e| format!("--state: {e}"))?;
    config.connect_timeout(timeout);
    let mut client = config
        .connect(postgres::NoTls)
        .map_err(|e| format!("--state: cannot connect to PostgreSQL: {e}"))?;
    // A balance query must not hang the probe behind a receiver's lock.
    client
        .batch_execute(&format!("SET statement_timeout = {}", timeout.as_millis()))
        .map_err(|e| format!("--state: {e}"))?;
    Ok(client)
}

fn balance_from_url(url: &str, timeout: Duration) -> Result<i64, String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .max_redirects(0)
        .proxy(None)
        .timeout_global(Some(timeout))
        .build()
        .into();
    let body = agent
        .get(url)
        .call()
        .and_then(|mut a| {
            a.body_mut()
                .with_config()
                .limit(super::deliver::MAX_ANSWER_BYTES)
                .read_to_vec()
        })
        .map_err(|e| format!("GET {url}: {e}"))?;
    let value: serde_json::Value =
        serde_json::from_slice(&body).map_err(|e| format!("GET {url}: not JSON: {e}"))?;
    value
        .as_i64()
        .or_else(|| value.get("balance").and_then(serde_json::Value::as_i64))
        .ok_or_else(|| format!("GET {url}: expected a number or {{\"balance\": N}}, got {value}"))
}
