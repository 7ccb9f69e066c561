//! The judge's tests: the atomic text equals the core's handler, each
//! built-in mistake is broken for its own mistake, the mistake corpus is judged broken for the right reason, the correct
//! variants correct, parser errors in both languages, the budget's stop.

use std::time::Duration;

use super::sample;
use super::{judge, open_scratch, Failure, Report, JUDGE_BUDGET};
use crate::labs::handlers::Contender;
use crate::labs::handlers::*;
use crate::labs::race::{replay_event, Arena, StepResult};
use crate::labs::tools::budget::Budget;

/// The seed of the events the tests judge with (any seed judges the same
/// verdicts: [`the_mistake_corpus_is_broken_for_the_right_reason_and_the_variants_are_correct`]
/// tries several).
const SEED: u64 = 27;

/// Judges with `deliveries` on a fresh scratch file, as `inbox-lab judge`
/// does (no crash sweep: that one needs child processes, `tests/judge.rs`).
fn judged_with(contender: &Contender, deliveries: &[usize], budget: Budget) -> Report {
    judged_seeded(contender, deliveries, budget, SEED)
}

fn judged_seeded(contender: &Contender, deliveries: &[usize], budget: Budget, seed: u64) -> Report {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("judge.sqlite3");
    let path = path.to_str().expect("utf-8");
    judge(
        contender,
        deliveries,
        || open_scratch(path),
        budget,
        seed,
        || Ok(None),
    )
    .expect("the judge runs")
}

/// Judges with 2 deliveries (3 multiply the schedules by ~50).
fn judged(contender: &Contender, budget: Budget) -> Report {
    judged_with(contender, &[2], budget)
}

fn script(name: &str, text: &str) -> Contender {
    let program = match parse(text) {
        Ok(p) => p,
        Err(e) => panic!("{name}: {e}"),
    };
    Contender::Script {
        name: name.to_owned(),
        program,
    }
}

#[test]
fn the_atomic_text_gives_exactly_the_verdicts_and_counts_of_the_cores_handler() {
    let h = Handler::Atomic;
    let core = judged(&Contender::Builtin(h), JUDGE_BUDGET);
    let text = judged(&script(h.as_str(), builtin(h)), JUDGE_BUDGET);
    assert_eq!(core.verdict, "correct");
    assert_eq!(core.verdict, text.verdict);
    assert_eq!(core.race, text.race, "race");
    assert_eq!(core.cases, text.cases, "cases");
    // The core stores its receipt in one step of two statements; the text
    // in two lines: one more fault point with each event.
    let (mut c, t) = (core.faults.clone(), text.faults.clone());
    assert_eq!(c.points + text.events as u64, t.points, "fault points");
    c.points = t.points;
    assert_eq!(c, t, "faults");
    assert_eq!(core.first_failure, text.first_failure);
}

#[test]
fn each_builtin_mistake_is_judged_broken_for_its_own_mistake() {
    let failed = |r: &Report, case: &str, answered: &str| {
        assert!(r.cases[case].contains(answered), "{case}: {:?}", r.cases);
    };
    for h in Handler::ALL.into_iter().skip(1) {
        let r = judged(&Contender::Builtin(h), JUDGE_BUDGET);
        assert_eq!(r.verdict, "broken", "{h}");
        let (race, faults) = (&r.race, &r.faults);
        match h {
            Handler::NoDedup => {
                failed(&r, "replay", "answered applied");
                assert!(
                    race.double_credits > 0 && faults.double_credits > 0,
                    "{r:?}"
                );
            }
            Handler::CheckThenAct => {
                // Right on every case alone; wrong only when raced.
                assert!(r.cases.values().all(|v| v == "ok"), "{:?}", r.cases);
                assert!(race.double_credits > 0, "{race:?}");
            }
            Handler::TwoTransactions => {
                // A crash between its transactions loses the credit; a
                // repeat racing it hears "duplicate" before the money is
                // there. It never pays twice.
                assert!(faults.lost_credits > 0, "{faults:?}");
                assert!(
                    race.wrong_answers > 0 && race.double_credits == 0,
                    "{race:?}"
                );
            }
            Handler::InsertOrIgnore => {
                // Another payload is "a repeat"; nothing else is wrong.
                failed(&r, "other_payload", "answered duplicate");
                assert_eq!((race.double_credits, faults.double_credits), (0, 0));
            }
            Handler::InsertOrReplace => {
                failed(&r, "replay", "answered applied");
                failed(&r, "other_payload", "answered applied");
                assert!(race.double_credits > 0, "{race:?}");
            }
            Handler::Atomic => {}
        }
    }
}

#[test]
fn with_three_deliveries_check_then_act_pays_twice_in_a_three_way_race() {
    // One handler with every kind of count (double credits, wrong
    // answers, a first failing schedule): 3 deliveries cost ~50 times 2.
    let r = judged_with(
        &Contender::Builtin(Handler::CheckThenAct),
        &[3],
        JUDGE_BUDGET,
    );
    assert!(r.race.interleavings > 1000, "{:?}", r.race);
    assert!(r.race.double_credits > 0, "{:?}", r.race);
    assert!(
        matches!(r.first_failure, Some(Failure::Race { deliveries: 3, .. })),
        "{:?}",
        r.first_failure
    );
}

#[test]
fn a_deadlock_is_counted_never_answered_and_its_schedule_replays_to_it() {
    let h = script(
        "deferred_begin",
        include_str!("corpus/deferred_begin.inbox"),
    );
    let report = judged(&h, JUDGE_BUDGET);
    assert!(report.race.deadlocks > 0, "{:?}", report.race);
    assert!(report.race.wrong_answers >= report.race.deadlocks);
    let Some(Failure::Race {
        deliveries,
        schedule,
        event,
    }) = report.first_failure
    else {
        panic!("no race failure: {:?}", report.first_failure);
    };
    // The schedule, replayed as the race lab does: every delivery still
    // running waits for a lock the other holds.
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("replay.sqlite3");
    let path = path.to_str().expect("utf-8");
    let arena = Arena::new(deliveries, || open_scratch(path)).expect("arena");
    let mut race = replay_event(&arena, h, &event, &schedule).expect("the schedule replays");
    assert!(!race.finished());
    for i in 0..deliveries {
        if race.next_statements(i).is_some() {
            let log = race.step(&arena, i).expect("step");
            assert_eq!(log.result, StepResult::Waiting, "delivery {i}");
        }
    }
}

#[test]
fn the_mistake_corpus_is_broken_for_the_right_reason_and_the_variants_are_correct() {
    let corpus: [(&str, &str); 11] = [
        (
            "no_transaction",
            include_str!("corpus/no_transaction.inbox"),
        ),
        (
            "deferred_begin",
            include_str!("corpus/deferred_begin.inbox"),
        ),
        (
            "select_then_insert",
            include_str!("corpus/select_then_insert.inbox"),
        ),
        (
            "update_before_insert",
            include_str!("corpus/update_before_insert.inbox"),
        ),
        (
            "commit_between",
            include_str!("corpus/commit_between.inbox"),
        ),
        (
            "no_rollback_path",
            include_str!("corpus/no_rollback_path.inbox"),
        ),
        (
            "duplicate_on_busy",
            include_str!("corpus/duplicate_on_busy.inbox"),
        ),
        ("account_only", include_str!("corpus/account_only.inbox")),
        (
            "insert_or_ignore",
            include_str!("corpus/insert_or_ignore.inbox"),
        ),
        (
            "correct_returning",
            include_str!("corpus/correct_returning.inbox"),
        ),
        (
            "correct_check_inside",
            include_str!("corpus/correct_check_inside.inbox"),
        ),
    ];
    for (name, text) in corpus {
        let expect = text
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("# expect: "))
            .unwrap_or_else(|| panic!("{name}: no '# expect:' line"));
        // Not a matter of the seed: a few of them, each its own events.
        for seed in [SEED, 1, 2_026] {
            judged_as_expected(name, text, expect, seed);
        }
    }
}

fn judged_as_expected(name: &str, text: &str, expect: &str, seed: u64) {
    let report = judged_seeded(&script(name, text), &[2], JUDGE_BUDGET, seed);
    let json = serde_json::to_value(&report).expect("json");
    if expect == "correct" {
        assert_eq!(report.verdict, "correct", "{name} (seed {seed}): {json}");
        return;
    }
    assert_eq!(report.verdict, "broken", "{name} (seed {seed}): {json}");
    let (check, field) = expect.split_once('.').expect("check.field");
    match check {
        "case" => assert_ne!(json["cases"][field], "ok", "{name}: {json}"),
        _ => assert!(
            json[check][field].as_u64().unwrap_or(0) > 0,
            "{name}: {check}.{field} is 0: {json}"
        ),
    }
}

/// The article's handler after a first line that sets some events apart:
/// those for which `select` returns a row run `special` instead.
fn gamed(select: &str, special: &str) -> String {
    let atomic = builtin(Handler::Atomic);
    format!("{select}\nIF ROW\n{special}\nEND\n{atomic}")
}

/// Credits without an inbox row: every replay is credited again.
const CREDIT_ONLY: &str =
    "UPDATE accounts SET balance = balance + :amount WHERE id = :account_id\n\
    IF CHANGED = 0\n  ANSWER unknown_account\nEND\nANSWER applied";

#[test]
fn a_handler_right_only_for_the_usual_event_is_judged_broken_with_the_event_that_shows_it() {
    // Each sets apart a value or a range the text writes down, and is
    // right for the article's event (provider-a, evt-1, account 1, 500).
    let keyed = [
        (
            "source",
            gamed("SELECT 1 WHERE :source = 'production'", CREDIT_ONLY),
        ),
        (
            "event id",
            gamed("SELECT 1 WHERE :event_id LIKE 'live-%'", CREDIT_ONLY),
        ),
        (
            "account",
            gamed("SELECT 1 WHERE :account_id = 42", CREDIT_ONLY),
        ),
        (
            "amount",
            gamed("SELECT 1 WHERE :amount > 5000", CREDIT_ONLY),
        ),
        (
            "race",
            gamed(
                "SELECT 1 WHERE :amount BETWEEN 700 AND 800",
                // Right one delivery at a time, wrong only in a race.
                builtin(Handler::CheckThenAct),
            ),
        ),
    ];
    for (what, text) in keyed {
        let report = judged(&script(what, &text), JUDGE_BUDGET);
        let json = serde_json::to_value(&report).expect("json");
        assert_eq!(report.verdict, "broken", "{what}: {json}");
        let Some(failure) = &report.first_failure else {
            panic!("{what}: no failure: {json}");
        };
        let event = match failure {
            Failure::Race { event, .. }
            | Failure::Faults { event, .. }
            | Failure::Case { event, .. } => event,
            Failure::Crash { .. } => panic!("{what}: no crash sweep here: {json}"),
        };
        let set_apart = match what {
            "source" => event.source == "production",
            "event id" => event.event_id.starts_with("live-"),
            "account" => event.account_id == 42,
            "amount" => event.amount > 5000,
            _ => (700..=800).contains(&event.amount),
        };
        assert!(
            set_apart,
            "{what}: the failing event is not one set apart: {json}"
        );
        if what == "race" {
            // Only a race shows it: one delivery at a time it is right.
            assert!(report.cases.values().all(|c| c == "ok"), "{json}");
            assert!(matches!(failure, Failure::Race { .. }), "{json}");
        } else {
            // The replay case names the event it was wrong with.
            let replay = &report.cases["replay"];
            assert!(replay.contains("expected duplicate"), "{what}: {json}");
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_report_and_another_seed_other_events() {
    let text = gamed("SELECT 1 WHERE :source = 'production'", CREDIT_ONLY);
    let h = script("gamed", &text);
    let run = |seed| judged_seeded(&h, &[2], JUDGE_BUDGET, seed);
    let json = |r: &Report| serde_json::to_string(r).expect("json");
    let first = run(1234);
    assert_eq!(first.seed, 1234);
    assert_eq!(json(&first), json(&run(1234)));
    assert_ne!(
        sample::Sample::of(1234, &h).events,
        sample::Sample::of(1235, &h).events
    );
}

#[test]
fn a_sample_holds_the_articles_event_the_handlers_literals_and_their_neighbours() {
    let text = gamed(
        "SELECT 1 WHERE :source = 'production' AND :amount >= 700",
        CREDIT_ONLY,
    );
    let program = parse(&text).expect("parses");
    let literals = program.literals();
    assert!(
        literals.texts.contains(&"production".to_owned()),
        "{literals:?}"
    );
    assert!(literals.ints.contains(&700), "{literals:?}");
    for seed in [0, 1, sample::MAX_SEED] {
        let s = sample::Sample::new(seed, &literals);
        assert!(s.events.len() >= sample::EVENTS, "{s:?}");
        assert_eq!(s.events[0], crate::labs::race::race_payload());
        for e in &s.events {
            e.to_event().expect("every event is valid");
        }
        let has = |f: &dyn Fn(&crate::labs::handlers::Payload) -> bool| s.events.iter().any(f);
        assert!(has(&|e| e.source == "production"), "{s:?}");
        assert!(has(&|e| e.event_id == "production"), "{s:?}");
        for n in [699, 700, 701] {
            assert!(has(&|e| e.amount == n), "{n}: {s:?}");
            assert!(has(&|e| e.account_id == n), "{n}: {s:?}");
        }
    }
    assert!(sample::seed(-1).is_err() && sample::seed(1 << 53).is_err());
    assert_eq!(sample::seed(5).ok(), Some(5));
}

#[test]
fn a_handler_that_runs_an_endless_query_is_stopped_by_the_budget() {
    let endless = "BEGIN IMMEDIATE\n\
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c\n\
        COMMIT\n\
        ANSWER applied\n";
    let budget = Budget {
        steps: 2_000_000,
        time: Duration::from_secs(30),
        ..JUDGE_BUDGET
    };
    let report = judged(&script("endless", endless), budget);
    assert_eq!(report.verdict, "broken");
    let stopped = report.stopped.expect("stopped");
    assert!(stopped.contains("budget"), "{stopped}");
    assert!(stopped.contains("SQLite steps"), "{stopped}");
}

#[test]
fn parser_errors_name_line_column_and_what_was_expected_in_both_languages() {
    use ScriptCode::*;
    const INS: &str = "INSERT INTO inbox(source, event_id, account_id, amount) VALUES (:source, :event_id, :account_id, :amount)";
    let attach = "ATTACH DATABASE 'x.db' AS x\nANSWER applied";
    let pragma = "PRAGMA writable_schema = 1\nANSWER applied";
    let ddl = "CREATE TABLE t(x)\nANSWER applied";
    let two = "SELECT 1; SELECT 2\nANSWER applied";
    let unknown = format!("{}\nANSWER applied", INS.replace(":amount)", ":amout)"));
    let positional = "SELECT ?1\nANSWER applied";
    let no_answer = "SELECT 1\nIF ROW\n  ANSWER applied\nEND";
    let unreachable = "SELECT 1\nANSWER applied\nSELECT 2";
    let missing_end = "SELECT 1\nIF ROW\n  ANSWER applied";
    let bad_answer = "SELECT 1\nANSWER maybe";
    let bad_cond = "SELECT 1\nIF CHANGED 0\nEND\nANSWER applied";
    let mixed = "SELECT 1\nIF ROW AND CHANGED = 0 OR NO ROW\nEND\nANSWER applied";
    let stray_end = "SELECT 1\nEND\nANSWER applied";
    let early_if = "IF ROW\nEND\nSELECT 1\nANSWER applied";
    let sql_error = "SELEC 1\nANSWER applied";
    let other_table = "SELECT * FROM sqlite_master\nANSWER applied";
    let other_write = "UPDATE lab_clock SET now = 0\nANSWER applied";
    let junk = "SELECT 1\nIF ROW x\nEND\nANSWER applied";
    let cut_short = "SELECT 1\nIF CHANGED\nEND\nANSWER applied";
    let cases: Vec<(&str, &str, ScriptCode, usize, usize, &str, &str)> = vec![
        (
            "attach",
            attach,
            Refused,
            1,
            1,
            "ATTACH is not allowed",
            "ATTACH в обработчике запрещено",
        ),
        (
            "pragma",
            pragma,
            Refused,
            1,
            1,
            "PRAGMA writable_schema is not allowed",
            "PRAGMA writable_schema в обработчике запрещено",
        ),
        (
            "ddl",
            ddl,
            Refused,
            1,
            1,
            "changing the schema (CREATE, DROP, ALTER) is not allowed",
            "менять схему (CREATE, DROP, ALTER) в обработчике запрещено",
        ),
        (
            "other table written",
            other_write,
            Refused,
            1,
            1,
            "writing lab_clock is not allowed",
            "запись в таблицу lab_clock в обработчике запрещена",
        ),
        (
            "junk after a condition",
            junk,
            Expected,
            2,
            8,
            "expected AND, OR or the end of the line, found \"x\"",
            "ожидалось AND, OR или конец строки, а здесь \"x\"",
        ),
        (
            "a condition cut short",
            cut_short,
            Expected,
            2,
            11,
            "expected =, !=, <, <=, > or >=, found the end of the line",
            "ожидалось =, !=, <, <=, > или >=, а здесь конец строки",
        ),
        (
            "two statements",
            two,
            MultipleStatements,
            1,
            1,
            "one statement per line",
            "один оператор на строку",
        ),
        (
            "unknown parameter",
            &unknown,
            UnknownParameter,
            1,
            98,
            "unknown parameter :amout",
            "неизвестный параметр :amout",
        ),
        (
            "positional",
            positional,
            PositionalParameter,
            1,
            8,
            "?1 is a positional parameter",
            "?1 — позиционный параметр",
        ),
        (
            "no answer",
            no_answer,
            MissingAnswer,
            5,
            1,
            "without ANSWER",
            "без ANSWER",
        ),
        (
            "unreachable",
            unreachable,
            Unreachable,
            3,
            1,
            "already answered on line 2",
            "уже ответила в строке 2",
        ),
        (
            "missing end",
            missing_end,
            MissingEnd,
            4,
            1,
            "the IF of line 2 is never closed: expected END",
            "IF из строки 2 не закрыт: нужен END",
        ),
        (
            "bad answer",
            bad_answer,
            UnknownAnswer,
            2,
            8,
            "unknown answer maybe",
            "неизвестный ответ maybe",
        ),
        (
            "bad condition",
            bad_cond,
            Expected,
            2,
            12,
            "expected =, !=, <, <=, > or >=, found \"0\"",
            "ожидалось =, !=, <, <=, > или >=, а здесь \"0\"",
        ),
        (
            "mixed",
            mixed,
            MixedAndOr,
            2,
            24,
            "AND and OR in one condition",
            "AND и OR в одном условии",
        ),
        (
            "stray end",
            stray_end,
            WithoutIf,
            2,
            1,
            "END without an IF",
            "END без IF",
        ),
        (
            "early if",
            early_if,
            BeforeStatement,
            1,
            1,
            "IF before any statement",
            "IF до первого оператора",
        ),
        (
            "sql error",
            sql_error,
            Sql,
            1,
            1,
            "SQLite does not accept this statement: near \"SELEC\"",
            "SQLite не принимает этот оператор: near \"SELEC\"",
        ),
        (
            "other table",
            other_table,
            Refused,
            1,
            1,
            "reading sqlite_master is not allowed",
            "чтение таблицы sqlite_master в обработчике запрещено",
        ),
    ];
    for (name, text, code, line, column, en, ru) in cases {
        let e = parse(text).map(|_| ()).expect_err(name);
        assert_eq!(
            (e.code, e.line, e.column),
            (code, line, column),
            "{name}: {e}"
        );
        let (got_en, got_ru) = (e.render(Lang::En), e.render(Lang::Ru));
        assert!(
            got_en.starts_with(&format!("line {line}, column {column}: ")),
            "{name}: {got_en}"
        );
        assert!(got_en.contains(en), "{name}: {got_en}");
        assert!(
            got_ru.starts_with(&format!("строка {line}, столбец {column}: ")),
            "{name}: {got_ru}"
        );
        assert!(got_ru.contains(ru), "{name}: {got_ru}");
        // Russian through and through: no English phrase slips in.
        for english in [" or ", "expected", "found", "the ", "reading", "writing"] {
            assert!(!got_ru.contains(english), "{name}: {english:?} in {got_ru}");
        }
    }
    // (the parser's own ScriptCode names must stay one of `ALL`)
    assert!(ScriptCode::ALL.contains(&Refused));
}

#[test]
fn size_limits_are_errors_not_work() {
    let long = format!("SELECT '{}'\nANSWER applied", "x".repeat(MAX_LINE_BYTES));
    assert_eq!(
        parse(&long).map(|_| ()).unwrap_err().code,
        ScriptCode::LineTooLong
    );
    let many = format!("{}ANSWER applied", "SELECT 1\n".repeat(MAX_STATEMENTS + 1));
    let e = parse(&many).map(|_| ()).unwrap_err();
    assert_eq!(
        (e.code, e.line),
        (ScriptCode::TooManyStatements, MAX_STATEMENTS + 1)
    );
    let huge = "#".repeat(MAX_TEXT_BYTES + 1);
    assert_eq!(
        parse(&huge).map(|_| ()).unwrap_err().code,
        ScriptCode::TextTooLong
    );
}

#[test]
fn the_judge_tells_each_check_as_it_starts_for_a_progress_bar() {
    use super::{judge_reporting, Progress};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("judge.sqlite3");
    let path = path.to_str().expect("utf-8");
    let mut told = Vec::new();
    let report = judge_reporting(
        &script("atomic", builtin(Handler::Atomic)),
        &[2, 3],
        || open_scratch(path),
        JUDGE_BUDGET,
        SEED,
        || Ok(None),
        &mut |p: Progress| told.push((p.check, p.done, p.total)),
    )
    .expect("the judge runs");
    assert_eq!(report.verdict, "correct");
    assert_eq!(
        told,
        [
            ("cases", 0, 4),
            ("faults", 1, 4),
            ("race_2", 2, 4),
            ("race_3", 3, 4),
            ("done", 4, 4)
        ]
    );
}

/// `atomic`'s text with every single line deleted and every two adjacent
/// lines swapped (comments aside: moving one changes nothing), each once.
fn mutants_of_atomic() -> Vec<(String, String)> {
    let lines: Vec<&str> = builtin(Handler::Atomic)
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    let text = |ls: &[&str]| ls.iter().map(|l| format!("{l}\n")).collect::<String>();
    let mut out = Vec::new();
    for i in 0..lines.len() {
        let mut ls = lines.clone();
        ls.remove(i);
        out.push((format!("atomic without line {}", i + 1), text(&ls)));
        if i + 1 < lines.len() {
            let mut ls = lines.clone();
            ls.swap(i, i + 1);
            out.push((
                format!("atomic with lines {} and {} swapped", i + 1, i + 2),
                text(&ls),
            ));
        }
    }
    out
}

/// For every built-in mistake and every mutant of `atomic` that parses,
/// the judge ends with a verdict, never its own error; every check that
/// counted a failure carries its explanation, in English and Russian, and
/// the steps that replay it; and no sentence is a raw storage error.
#[test]
fn every_mutant_of_atomic_and_every_mistake_is_judged_with_each_failure_explained() {
    let mut judged_any = 0;
    let builtins = Handler::ALL
        .iter()
        .map(|h| (h.as_str().to_owned(), builtin(*h).to_owned()));
    for (name, text) in builtins.chain(mutants_of_atomic()) {
        let Ok(program) = parse(&text) else {
            continue; // exit 2: it does not parse
        };
        judged_any += 1;
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("judge.sqlite3");
        let path = path.to_str().expect("utf-8");
        let contender = Contender::Script {
            name: name.clone(),
            program,
        };
        let report = match judge(
            &contender,
            &[2],
            || open_scratch(path),
            JUDGE_BUDGET,
            SEED,
            || Ok(None),
        ) {
            Ok(report) => report,
            Err(e) => panic!("{name}: the judge ended in its own error: {e}\n{text}"),
        };
        let r = serde_json::to_value(&report).expect("json");
        let line = r.to_string();
        for raw in [
            "cannot be used",
            "no transaction is active",
            "storage error",
        ] {
            assert!(!line.contains(raw), "{name}: raw {raw:?}: {r}");
        }
        let failed = |check: &str| {
            r["failures"]
                .as_array()
                .is_some_and(|fs| fs.iter().any(|f| f["check"] == check))
        };
        let counted = |c: &serde_json::Value| {
            [
                "double_credits",
                "lost_credits",
                "wrong_answers",
                "deadlocks",
            ]
            .iter()
            .any(|k| c[k].as_u64() > Some(0))
        };
        assert_eq!(counted(&r["race"]), failed("race"), "{name}: race: {r}");
        assert_eq!(
            counted(&r["faults"]),
            failed("faults"),
            "{name}: faults: {r}"
        );
        let bad_case = report.cases.values().any(|v| v != "ok");
        assert_eq!(bad_case, failed("case"), "{name}: cases: {r}");
        assert_eq!(
            r["verdict"] == "broken",
            !r["failures"].as_array().is_none_or(Vec::is_empty) || report.stopped.is_some(),
            "{name}: {r}"
        );
        for f in r["failures"].as_array().into_iter().flatten() {
            let ru = f["why"]["ru"].as_str().unwrap_or_default();
            let en = f["why"]["en"].as_str().unwrap_or_default();
            assert!(en.len() > 20, "{name}: why.en: {f}");
            assert!(
                ru.chars().any(|c| ('а'..='я').contains(&c)),
                "{name}: why.ru: {f}"
            );
            let steps = f["steps"].as_array().map_or(0, Vec::len);
            assert!(steps > 0, "{name}: no steps to replay: {f}");
        }
    }
    assert!(judged_any > 20, "only {judged_any} handlers parsed");
}
