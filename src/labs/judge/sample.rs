//! The events the judge delivers, varied from a seed.
//!
//! A judge that always delivered one event could be passed by a handler
//! that is right for that event only (`IF` the source is `'production'`,
//! credit without an inbox row). So every check runs over a `Sample`:
//! the article's event first, then events whose sources, event ids,
//! accounts and amounts are, field by field, the values the handler text
//! itself writes down ([`crate::labs::handlers::Program::literals`]) and their neighbours
//! (so `> 1000` meets 1000 and 1001), then random values of every size.
//!
//! Invariant: the same seed and the same handler give the same events, so
//! a report is repeated with its `seed`.

use serde::Serialize;

use crate::core::error::Error;
use crate::core::event::{Event, Field, MAX_ACCOUNT_ID, MAX_AMOUNT};
use crate::labs::handlers::{self, Contender, Literals, Payload};
use crate::labs::race::race_payload;

/// The largest seed: seeds travel through JavaScript numbers.
pub const MAX_SEED: u64 = (1 << 53) - 1;
/// The input naming a seed (`--seed`, the page's `seed`).
pub const SEED: Field = Field::new("seed");
/// Events in a sample, at least.
pub(crate) const EVENTS: usize = 8;
/// Events in a sample, at most, however many literals a handler holds (the
/// seed then chooses which).
const MAX_EVENTS: usize = 24;
/// Random values in each field, at least, besides the literals.
const RANDOM: usize = 2;

/// The events of one judging, and the seed they came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct Sample {
    pub seed: u64,
    pub events: Vec<Payload>,
}

/// A seed given as a number: `0..=`[`MAX_SEED`].
///
/// # Errors
/// [`Error::InvalidInput`] for `seed` outside that range.
pub fn seed(n: i64) -> Result<u64, Error> {
    u64::try_from(n)
        .ok()
        .filter(|&s| s <= MAX_SEED)
        .ok_or_else(|| Error::invalid(SEED, format!("must be a whole number from 0 to {MAX_SEED}")))
}

impl Sample {
    /// The sample for `contender` (a text's literals; a built-in's are its
    /// text's; a handler in Rust has none the judge can read).
    pub fn of(seed: u64, contender: &Contender) -> Sample {
        let literals = match contender {
            Contender::Script { program, .. } => program.literals(),
            Contender::Builtin(h) => handlers::parse(handlers::builtin(*h))
                .map(|p| p.literals())
                .unwrap_or_default(),
            Contender::Rust(_) => Literals::default(),
        };
        Sample::new(seed, &literals)
    }

    /// The sample of `seed` for a handler holding `literals`.
    pub fn new(seed: u64, literals: &Literals) -> Sample {
        let mut rng = Rng(seed);
        let classic = race_payload();
        let key_ok = |t: &String| Event::new(t.as_str(), t.as_str(), 1, 1).is_ok();
        let mut texts: Vec<String> = literals
            .texts
            .iter()
            .filter(|t| key_ok(t))
            .cloned()
            .collect();
        texts.sort_unstable();
        texts.dedup();
        let near = |ok: fn(i64) -> bool| -> Vec<i64> {
            let ns = literals.ints.iter();
            let mut near: Vec<i64> = ns
                .flat_map(|&n| [n.saturating_sub(1), n, n.saturating_add(1)])
                .filter(|&n| ok(n))
                .collect();
            near.sort_unstable();
            near.dedup();
            near
        };
        let accounts = near(|n| (1..=MAX_ACCOUNT_ID).contains(&n));
        let amounts = near(|n| (1..=MAX_AMOUNT).contains(&n));
        let most = texts.len().max(accounts.len()).max(amounts.len());
        let n = (1 + most + RANDOM).clamp(EVENTS, MAX_EVENTS);
        let sources = pool(n, classic.source.clone(), texts.clone(), &mut rng, |r| {
            r.text()
        });
        let ids = pool(n, classic.event_id.clone(), texts, &mut rng, Rng::text);
        let accounts = pool(n, classic.account_id, accounts, &mut rng, |r| {
            r.below_bits(53).clamp(1, MAX_ACCOUNT_ID)
        });
        let amounts = pool(n, classic.amount, amounts, &mut rng, |r| {
            r.below_bits(30).clamp(1, MAX_AMOUNT)
        });
        let events = (0..n)
            .map(|i| Payload {
                source: sources[i].clone(),
                event_id: ids[i].clone(),
                account_id: accounts[i],
                amount: amounts[i],
            })
            .collect();
        Sample { seed, events }
    }

    /// Event `i`'s neighbour: where a case needs a second value of a field
    /// (another source, a missing account), it takes the next event's.
    pub(crate) fn next(&self, i: usize) -> &Payload {
        &self.events[(i + 1) % self.events.len()]
    }
}

/// `n` distinct values of one field: the article's first, then the
/// literals in an order the seed chooses (as many as leave room for
/// [`RANDOM`] random ones), then random ones; all but the first shuffled,
/// so each field's values meet the others' in a seeded combination.
fn pool<T: Clone + PartialEq>(
    n: usize,
    classic: T,
    mut literals: Vec<T>,
    rng: &mut Rng,
    random: impl Fn(&mut Rng) -> T,
) -> Vec<T> {
    rng.shuffle(&mut literals);
    let mut out = vec![classic];
    for v in literals {
        if out.len() + RANDOM >= n {
            break;
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    while out.len() < n {
        let v = random(rng);
        if !out.contains(&v) {
            out.push(v);
        }
    }
    rng.shuffle(&mut out[1..]);
    out
}

/// SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom number
/// generators", 2014): a seed in, the same numbers out, everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        // n is small: the modulo's bias is far below what a sample shows.
        usize::try_from(self.next() % (n.max(1) as u64)).unwrap_or(0)
    }

    /// A number of a random size: below 2^b for b in 1..=`bits`, so small
    /// and large values are as likely as each other.
    fn below_bits(&mut self, bits: u32) -> i64 {
        let b = 1 + u32::try_from(self.below(bits as usize)).unwrap_or(0);
        i64::try_from(self.next() >> (64 - b)).unwrap_or(i64::MAX)
    }

    /// A valid key of 1 to 40 characters: ASCII of every kind, a space
    /// inside, and letters from other scripts.
    fn text(&mut self) -> String {
        const CHARS: &[char] = &[
            'a', 'k', 'z', 'A', 'Q', 'Z', '0', '7', '9', '-', '_', '.', ':', '/', '%', '\'', ' ',
            'é', 'ж', '漢', '🙂',
        ];
        let len = 1 + self.below(40);
        let mut s: String = (0..len).map(|_| CHARS[self.below(CHARS.len())]).collect();
        if s.starts_with(' ') {
            s.replace_range(..1, "x");
        }
        s
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}
