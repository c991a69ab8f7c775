//! Throttle keys: at most `limit` starts of one key's jobs in any
//! `period_ms`, the rule written once for both backends. A key keeps
//! `limit` slots, each with its last start and the time it is next free (a
//! period after that start, or later while a waiting job holds it). A job
//! new to the key takes the slot that frees first: it starts if the slot is
//! free now, and otherwise waits (is parked until then) holding it, so the
//! key's jobs are served in the order a claim first met them and none is
//! looked at again before its turn. A job that waited starts once its
//! slot's last start is a period old.
//!
//! Each slot's starts are at least a period apart, so any window of a
//! period holds at most one start a slot: `limit` in all.

use crate::time::Millis;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Most starts a key may allow a period (a key's row holds a slot each).
pub const MAX_THROTTLE_LIMIT: u32 = 1_000;
/// Longest period a throttle may count starts over: a day.
pub const MAX_THROTTLE_PERIOD_MS: u64 = 86_400_000;

/// At most `limit` jobs of one key start in any `period_ms`; the rest wait
/// their turn, in order. As a task or a job declares it, `key` is read as a
/// concurrency key is (text, a `{field}` template or a JSON pointer into
/// the input); as a job keeps it, it is the key made from the job's input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"key": "{customer}", "limit": 10, "period_ms": 60000}))]
pub struct Throttle {
    pub key: String,
    /// 1 to 1,000 starts a period.
    pub limit: u32,
    /// 1 ms to a day.
    pub period_ms: u64,
}

impl Throttle {
    /// What is wrong with its limit and period, in words a user can act
    /// on (its key is checked where it is read).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.key.trim().is_empty() {
            out.push("throttle.key must not be empty".to_owned());
        }
        if self.limit == 0 || self.limit > MAX_THROTTLE_LIMIT {
            out.push(format!(
                "throttle.limit must be between 1 and {MAX_THROTTLE_LIMIT} (starts a period); it is {}",
                self.limit
            ));
        }
        if self.period_ms == 0 || self.period_ms > MAX_THROTTLE_PERIOD_MS {
            out.push(format!(
                "throttle.period_ms must be between 1 and {MAX_THROTTLE_PERIOD_MS} (a day); it is {}",
                self.period_ms
            ));
        }
        out
    }

    /// As the job's `throttle` column keeps it.
    pub fn to_text(&self) -> String {
        // Three plain fields always write.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The column's text; `None` for text that does not read (a row
    /// written by hand), which claims then treat as unthrottled.
    pub fn from_text(text: &str) -> Option<Throttle> {
        serde_json::from_str(text).ok()
    }
}

/// One slot of a key: when it last let a job start, and when it is next
/// free (never before a period after that start).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Slot {
    pub started: Millis,
    pub free_at: Millis,
}

/// What a key's row keeps: its slots in use, by index. A slot whose last
/// start is a period old and that no job waits on decides as one never
/// used, so it is left out: a row holds the key's starts of the last
/// period and its waiting jobs, not `limit` slots. Indexes stay put, since
/// a parked job keeps the one it waits on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KeyState {
    pub slots: BTreeMap<u32, Slot>,
}

/// What becomes of a throttled job a claim found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// It starts now, in this slot.
    Start { slot: u32 },
    /// It waits until `until` (its `run_at`), holding this slot.
    Wait { until: Millis, slot: u32 },
}

impl KeyState {
    /// The key row's text: `[[index, started, free_at], …]`. A row that
    /// does not read starts afresh (its slots' history is lost, never a
    /// job).
    pub fn from_text(text: &str) -> KeyState {
        let rows: Vec<(u32, Millis, Millis)> = serde_json::from_str(text).unwrap_or_default();
        KeyState {
            slots: rows
                .into_iter()
                .map(|(i, started, free_at)| (i, Slot { started, free_at }))
                .collect(),
        }
    }

    pub fn to_text(&self) -> String {
        let rows: Vec<(u32, Millis, Millis)> = self
            .slots
            .iter()
            .map(|(&i, s)| (i, s.started, s.free_at))
            .collect();
        serde_json::to_string(&rows).unwrap_or_default()
    }

    /// Until when the key holds anything: past it every slot is free and
    /// no job waits on one, so its row may go.
    pub fn held_until(&self) -> Millis {
        self.slots.values().map(|s| s.free_at).max().unwrap_or(0)
    }

    /// Decides for a job of the key at `now`: `held` is the slot it waits
    /// on, if it waited before. Updates the slots as the decision takes
    /// them.
    pub fn decide(&mut self, t: &Throttle, now: Millis, held: Option<u32>) -> Decision {
        let limit = t.limit.clamp(1, MAX_THROTTLE_LIMIT);
        let period = i64::try_from(t.period_ms.min(MAX_THROTTLE_PERIOD_MS)).unwrap_or(0);
        // A slot is free again a period after its start, and `free_at` is
        // never before that; one free by now decides as an unused one. A
        // limit lowered since drops the slots past it (a job waiting on
        // one comes back new).
        self.slots.retain(|&i, s| i < limit && s.free_at > now);
        if let Some(i) = held.filter(|&i| i < limit) {
            let Some(s) = self.slots.get_mut(&i) else {
                self.slots.insert(i, started_now(now, period));
                return Decision::Start { slot: i };
            };
            if s.started.saturating_add(period) <= now {
                s.started = now;
                s.free_at = s.free_at.max(now.saturating_add(period));
                return Decision::Start { slot: i };
            }
            // Another job took the slot after it (this one came late):
            // a period after that start.
            return Decision::Wait {
                until: s.started.saturating_add(period),
                slot: i,
            };
        }
        // Every slot kept is busy: a job new to the key takes an unused
        // one while there is one, and otherwise the one that frees first.
        if let Some(free) = (0..limit).find(|i| !self.slots.contains_key(i)) {
            self.slots.insert(free, started_now(now, period));
            return Decision::Start { slot: free };
        }
        let (&slot, s) = self
            .slots
            .iter_mut()
            .min_by_key(|(_, s)| s.free_at)
            .expect("a key at its limit keeps at least one slot");
        let at = s.free_at;
        s.free_at = at.saturating_add(period);
        Decision::Wait { until: at, slot }
    }
}

fn started_now(now: Millis, period: Millis) -> Slot {
    Slot {
        started: now,
        free_at: now.saturating_add(period),
    }
}

/// The keys one claim decided jobs of: each read once (by the backend,
/// when the claim first meets the key) and written back at its end.
#[derive(Debug, Default)]
pub struct ClaimKeys {
    keys: HashMap<(String, String), KeyState>,
}

impl ClaimKeys {
    /// A tenant's key as this claim has it so far, if it read it.
    pub fn get(&mut self, tenant: &str, key: &str) -> Option<&mut KeyState> {
        // Two small strings a throttled job: cheap beside its claim.
        self.keys.get_mut(&(tenant.to_owned(), key.to_owned()))
    }

    /// Keeps a key the backend read, and answers it.
    pub fn insert(&mut self, tenant: &str, key: &str, state: KeyState) -> &mut KeyState {
        self.keys
            .entry((tenant.to_owned(), key.to_owned()))
            .or_insert(state)
    }

    /// What to write back: each key's tenant, name, slots and
    /// `held_until` ($1 to $4 of `WRITE_KEY`).
    pub fn rows(&self) -> impl Iterator<Item = (&str, &str, String, Millis)> {
        self.keys
            .iter()
            .map(|((t, k), s)| (t.as_str(), k.as_str(), s.to_text(), s.held_until()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(limit: u32, period_ms: u64) -> Throttle {
        Throttle {
            key: "k".into(),
            limit,
            period_ms,
        }
    }

    #[test]
    fn new_jobs_start_until_the_limit_and_then_wait_in_turn() {
        let mut k = KeyState::default();
        let two_a_second = t(2, 1000);
        let mut got = Vec::new();
        for _ in 0..6 {
            got.push(k.decide(&two_a_second, 10_000, None));
        }
        assert_eq!(
            got,
            [
                Decision::Start { slot: 0 },
                Decision::Start { slot: 1 },
                Decision::Wait {
                    until: 11_000,
                    slot: 0
                },
                Decision::Wait {
                    until: 11_000,
                    slot: 1
                },
                Decision::Wait {
                    until: 12_000,
                    slot: 0
                },
                Decision::Wait {
                    until: 12_000,
                    slot: 1
                },
            ]
        );
        // A job that waited starts at its time, not before.
        assert_eq!(
            k.decide(&two_a_second, 10_999, Some(0)),
            Decision::Wait {
                until: 11_000,
                slot: 0
            }
        );
        assert_eq!(
            k.decide(&two_a_second, 11_000, Some(0)),
            Decision::Start { slot: 0 }
        );
        // Its slot stays held by the one waiting after it.
        assert_eq!(k.slots[&0].free_at, 13_000);
        // One that came late pushes the next one on its slot by as much.
        assert_eq!(
            k.decide(&two_a_second, 11_500, Some(1)),
            Decision::Start { slot: 1 }
        );
        assert_eq!(
            k.decide(&two_a_second, 12_000, Some(1)),
            Decision::Wait {
                until: 12_500,
                slot: 1
            }
        );
        // A new job goes after every waiting one.
        assert_eq!(
            k.decide(&two_a_second, 12_000, None),
            Decision::Wait {
                until: 13_000,
                slot: 0
            }
        );
    }

    #[test]
    fn no_window_of_a_period_holds_more_than_the_limit() {
        // Jobs arrive every 70 ms; every third that waits is claimed 300
        // ms after its turn, and the one after it on its slot on time.
        let three = t(3, 1000);
        let mut k = KeyState::default();
        let mut waiting: Vec<(Millis, u32, Millis)> = Vec::new();
        let (mut starts, mut parked) = (Vec::new(), 0);
        let mut late_ones = 0;
        for tick in 0..600i64 {
            let now = tick * 10;
            let mut still = Vec::new();
            for (until, slot, late) in waiting.drain(..) {
                if until + late > now {
                    still.push((until, slot, late));
                    continue;
                }
                late_ones += usize::from(late > 0);
                match k.decide(&three, now, Some(slot)) {
                    Decision::Start { .. } => starts.push(now),
                    Decision::Wait { until, slot } => still.push((until, slot, 0)),
                }
            }
            waiting = still;
            if tick % 7 == 0 {
                match k.decide(&three, now, None) {
                    Decision::Start { .. } => starts.push(now),
                    Decision::Wait { until, slot } => {
                        assert!(until > now);
                        parked += 1;
                        let late = if parked % 3 == 0 { 300 } else { 0 };
                        waiting.push((until, slot, late));
                    }
                }
            }
        }
        assert!(late_ones >= 3, "{late_ones}");
        assert!(starts.len() > 10, "{starts:?}");
        for (i, &s) in starts.iter().enumerate() {
            let in_window = starts[i..].iter().take_while(|&&x| x < s + 1000).count();
            assert!(in_window <= 3, "{in_window} starts from {s}: {starts:?}");
        }
    }

    #[test]
    fn a_row_keeps_only_the_slots_of_the_last_period_and_its_waiting_jobs() {
        let mut k = KeyState::default();
        let many = t(1000, 1000);
        for now in 0..5 {
            assert_eq!(
                k.decide(&many, now, None),
                Decision::Start {
                    slot: u32::try_from(now).unwrap()
                }
            );
        }
        assert_eq!(k.slots.len(), 5);
        // A period on, the first three are free and go; a new job takes
        // the lowest index free.
        assert_eq!(k.decide(&many, 1002, None), Decision::Start { slot: 0 });
        assert_eq!(k.slots.keys().copied().collect::<Vec<_>>(), [0, 3, 4]);
        // A job that waited on a slot gone since starts in it.
        assert_eq!(k.decide(&many, 1003, Some(1)), Decision::Start { slot: 1 });
        // At the limit, a new job waits for the slot that frees first.
        let one = t(1, 1000);
        let mut k = KeyState::default();
        assert_eq!(k.decide(&one, 0, None), Decision::Start { slot: 0 });
        assert_eq!(
            k.decide(&one, 10, None),
            Decision::Wait {
                until: 1000,
                slot: 0
            }
        );
        // Its slot is kept past the first start's period, while it waits.
        assert_eq!(
            k.decide(&one, 1500, None),
            Decision::Wait {
                until: 2000,
                slot: 0
            }
        );
        assert_eq!(k.decide(&one, 1500, Some(0)), Decision::Start { slot: 0 });
        assert_eq!(k.to_text(), "[[0,1500,3000]]");
    }

    #[test]
    fn a_changed_limit_resizes_the_slots_and_the_row_reads_back() {
        let mut k = KeyState::default();
        assert_eq!(k.decide(&t(1, 500), 0, None), Decision::Start { slot: 0 });
        assert_eq!(k.decide(&t(2, 500), 1, None), Decision::Start { slot: 1 });
        assert_eq!(k.held_until(), 501);
        let text = k.to_text();
        assert_eq!(KeyState::from_text(&text), k);
        assert_eq!(KeyState::from_text("not json"), KeyState::default());
        // Lowered to one: the slot past it is gone, and a job that waited
        // on it comes back as new.
        assert_eq!(
            k.decide(&t(1, 500), 2, Some(1)),
            Decision::Wait {
                until: 500,
                slot: 0
            }
        );
        assert_eq!(k.slots.len(), 1);
        let th = t(4, 60_000);
        assert_eq!(Throttle::from_text(&th.to_text()), Some(th));
        assert_eq!(Throttle::from_text("{\"key\":1}"), None);
    }
}
