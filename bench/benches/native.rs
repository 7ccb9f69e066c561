//! The native side of `cargo xtask bench`: the real apply path
//! (`inbox_lab::apply`) on rusqlite with its bundled SQLite, on files on
//! disk, with the settings the browser runs with (`inbox_lab_bench`).
//!
//! ```text
//! cargo bench -p inbox-lab-bench --bench native -- --dir DIR [--events 2000] [--rounds 1]
//!                                [--setting delete-full] [--profile-events 0]
//! ```
//!
//! For each setting (all three, or the one `--setting` names) and round: a
//! fresh database in DIR, events `0..N` applied one transaction each, then
//! all replayed (duplicates), each delivery timed with `Instant`; the round
//! with the median apply throughput is reported. With `--profile-events M`,
//! then one profiled pass of M events per setting through the timing VFS
//! shim (where a commit's time goes). Prints one JSON document:
//! `{engine: "native", results: [RESULT per setting], rounds, profiles}`,
//! RESULT as the browser's (`www/panels/bench/benchworker.js`).
//!
//! `cargo xtask bench` runs it once per round and setting between the
//! browser's runs (bench/run.mjs), so every engine meets the same moments
//! of the machine; `--rounds 0` runs only the profiles. With
//! `--official-sql` alone it prints the official worker's SQL module
//! (`inbox_lab_bench::official_sql_module`) instead, with `--tables FILE` the
//! Markdown tables of a `cargo xtask bench` run's JSON (`report.rs`).

#[cfg(not(target_family = "wasm"))]
fn main() -> std::process::ExitCode {
    match native::main(std::env::args().skip(1).collect()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bench native: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

// The benchmark is native only; the wasm32 build of this target is empty.
#[cfg(target_family = "wasm")]
fn main() {}

#[cfg(not(target_family = "wasm"))]
mod native {
    use std::path::{Path, PathBuf};
    use std::time::Instant;

    use inbox_lab::{apply, Outcome};
    use inbox_lab_bench::{self as bench, Profile, Setting, Settings, Summary, Tally};
    use serde::Serialize;

    #[derive(Serialize)]
    struct RunResult {
        engine: &'static str,
        setting: Setting,
        settings: Settings,
        apply: Summary,
        duplicate: Summary,
        tally: Tally,
    }

    #[derive(Serialize)]
    struct Report {
        engine: &'static str,
        results: Vec<RunResult>,
        rounds: Vec<Vec<RunResult>>,
        profiles: Vec<Profile>,
    }

    struct Options {
        events: u32,
        rounds: u32,
        profile_events: u32,
        settings: Vec<Setting>,
        dir: PathBuf,
    }

    pub fn main(args: Vec<String>) -> Result<(), String> {
        match args.as_slice() {
            [flag] if flag == "--official-sql" => {
                print!("{}", bench::official_sql_module());
                return Ok(());
            }
            [flag, path] if flag == "--tables" => {
                let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
                let run = serde_json::from_str(&text)
                    .map_err(|e| format!("{path} is not a benchmark's JSON: {e}"))?;
                print!("{}", bench::report::tables(&run));
                return Ok(());
            }
            _ => {}
        }
        let options = parse(args)?;
        std::fs::create_dir_all(&options.dir)
            .map_err(|e| format!("creating {}: {e}", options.dir.display()))?;
        let mut rounds: Vec<Vec<RunResult>> = Vec::new();
        for round in 1..=options.rounds {
            let mut row = Vec::new();
            for &setting in &options.settings {
                eprintln!(
                    "bench native: round {round}/{}: {}, {} events",
                    options.rounds,
                    setting.name(),
                    options.events
                );
                row.push(run(&options.dir, setting, options.events)?);
            }
            rounds.push(row);
        }
        let mut results = Vec::new();
        for i in 0..rounds.first().map_or(0, Vec::len) {
            let mut all: Vec<&RunResult> = rounds.iter().map(|r| &r[i]).collect();
            all.sort_by(|a, b| a.apply.events_per_s.total_cmp(&b.apply.events_per_s));
            let median = all[(all.len() - 1) / 2];
            results.push(RunResult {
                engine: median.engine,
                setting: median.setting,
                settings: median.settings.clone(),
                apply: median.apply,
                duplicate: median.duplicate,
                tally: median.tally,
            });
        }
        let mut profiles = Vec::new();
        for &setting in options
            .settings
            .iter()
            .filter(|_| options.profile_events > 0)
        {
            let path = fresh(&options.dir, &format!("profile-{}", setting.name()))?;
            let conn = bench::open_profiled(&path, setting).map_err(|e| e.to_string())?;
            profiles.push(
                bench::profile(&conn, setting, options.profile_events)
                    .map_err(|e| e.to_string())?,
            );
            drop(conn);
            remove(&path);
        }
        let report = Report {
            engine: "native",
            results,
            rounds,
            profiles,
        };
        let json = serde_json::to_string_pretty(&report).map_err(|e| e.to_string())?;
        println!("{json}");
        Ok(())
    }

    fn run(dir: &Path, setting: Setting, events: u32) -> Result<RunResult, String> {
        let path = fresh(dir, setting.name())?;
        let conn = bench::open(&path, setting).map_err(|e| e.to_string())?;
        let settings = bench::settings(&conn).map_err(|e| e.to_string())?;
        let timed = |expect_applied: bool| -> Result<Summary, String> {
            let mut latencies = Vec::with_capacity(events as usize);
            let t0 = Instant::now();
            for i in 0..events {
                let start = Instant::now();
                let outcome = apply(&conn, &bench::event(i), None).map_err(|e| e.to_string())?;
                latencies.push(start.elapsed().as_secs_f64() * 1000.0);
                if matches!(outcome, Outcome::Applied(_)) != expect_applied {
                    return Err(format!("event {i}: unexpected {}", outcome.kind()));
                }
            }
            Ok(Summary::of(&latencies, t0.elapsed().as_secs_f64() * 1000.0))
        };
        let applied = timed(true)?;
        let duplicate = timed(false)?;
        let tally = bench::tally(&conn).map_err(|e| e.to_string())?;
        let n = i64::from(events);
        if (tally.balance, tally.inbox, tally.last_receipt) != (n, n, n) {
            return Err(format!(
                "after {events} distinct events the database holds {tally:?}"
            ));
        }
        drop(conn);
        remove(&path);
        Ok(RunResult {
            engine: "native",
            setting,
            settings,
            apply: applied,
            duplicate,
            tally,
        })
    }

    /// A path in `dir` for a new database, with no leftovers of an earlier run.
    fn fresh(dir: &Path, name: &str) -> Result<String, String> {
        let path = dir.join(format!("bench-{name}.sqlite3"));
        remove(
            path.to_str()
                .ok_or_else(|| format!("{} is not UTF-8", path.display()))?,
        );
        Ok(path.display().to_string())
    }

    fn remove(path: &str) {
        for suffix in ["", "-journal", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{path}{suffix}"));
        }
    }

    fn parse(args: Vec<String>) -> Result<Options, String> {
        let mut options = Options {
            events: 2000,
            rounds: 1,
            profile_events: 0,
            settings: Setting::ALL.to_vec(),
            dir: PathBuf::new(),
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| args.next().ok_or_else(|| format!("{name} needs a value"));
            let number = |name: &str, v: String| {
                v.parse::<u32>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("{name} must be a positive integer, got {v:?}"))
            };
            match arg.as_str() {
                "--events" => options.events = number("--events", value("--events")?)?,
                "--rounds" => {
                    let v = value("--rounds")?;
                    options.rounds = v
                        .parse()
                        .map_err(|_| format!("--rounds must be a number, got {v:?}"))?;
                }
                "--setting" => options.settings = vec![value("--setting")?.parse()?],
                "--profile-events" => {
                    options.profile_events = number("--profile-events", value("--profile-events")?)?
                }
                "--dir" => options.dir = PathBuf::from(value("--dir")?),
                // `cargo bench` passes this to every bench target.
                "--bench" => {}
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if options.dir.as_os_str().is_empty() {
            return Err("--dir DIR is required (where the databases go)".into());
        }
        Ok(options)
    }
}
