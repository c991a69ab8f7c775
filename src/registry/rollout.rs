//! Canary rollouts: which version a new job of a task pins while a new
//! version is staged beside the live one. The choice is a hash of the
//! job's id, so it is the same wherever and whenever it is made (a retried
//! enqueue, a redrive, another server).

use super::TaskVersion;
use crate::store::Millis;
use sha2::{Digest as _, Sha256};
use std::sync::Arc;

/// What new jobs of a task pin: its live version, and a staged one.
pub struct TaskHead {
    pub live: Arc<TaskVersion>,
    pub staged: Option<Staged>,
}

/// A version being rolled out, and the share of new jobs it gets.
pub struct Staged {
    pub version: Arc<TaskVersion>,
    /// 0 to 100.
    pub percent: u8,
    pub started_at: Millis,
}

impl TaskHead {
    /// The version job `job_id` pins: the staged one when the id's bucket
    /// falls inside its share.
    pub fn pick(&self, job_id: &str) -> &Arc<TaskVersion> {
        match &self.staged {
            Some(s) if takes_staged(job_id, s.percent) => &s.version,
            _ => &self.live,
        }
    }
}

/// The id's bucket, 0 to 99: the first eight bytes of its sha256, as a
/// number, modulo 100 (the bias of 2^64 mod 100 is below 1e-17).
pub fn bucket(job_id: &str) -> u8 {
    let hash = Sha256::digest(job_id.as_bytes());
    let mut first = [0u8; 8];
    first.copy_from_slice(&hash[..8]);
    (u64::from_be_bytes(first) % 100) as u8
}

/// Whether a job with this id pins a version staged at `percent`.
pub fn takes_staged(job_id: &str, percent: u8) -> bool {
    bucket(job_id) < percent
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jobs_choice_is_stable_and_follows_the_share() {
        let ids: Vec<String> = (0..10_000).map(|_| crate::job::new_id()).collect();
        for id in &ids {
            assert_eq!(bucket(id), bucket(id));
            assert!(!takes_staged(id, 0), "0 % takes none");
            assert!(takes_staged(id, 100), "100 % takes all");
        }
        // A job staged at 10 % is staged at every larger share too, so a
        // ramp up never moves a job back to the live version.
        for id in &ids {
            if takes_staged(id, 10) {
                assert!(takes_staged(id, 50));
            }
        }
        // 10,000 ids at 25 %: 2,500 expected, sd ≈ 43; 6 sd either side.
        let staged = ids.iter().filter(|id| takes_staged(id, 25)).count();
        assert!((2_240..=2_760).contains(&staged), "{staged} of 10,000");
        // Ids made in one millisecond differ in their last characters
        // only; they still spread over the buckets.
        let mut seen = [false; 100];
        for id in &ids[..2_000] {
            seen[usize::from(bucket(id))] = true;
        }
        assert!(seen.iter().all(|s| *s));
    }
}
