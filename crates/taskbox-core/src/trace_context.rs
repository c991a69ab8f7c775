//! A job's place in a trace: the W3C `traceparent` read and written, and
//! the ids a job's spans take.
//!
//! A job's trace is known without the exporter and without a stored value
//! for most jobs: its trace id is the job's id (a ULID is 128 bits, so a
//! trace is found by the job it is of), and the span of its enqueue has an
//! id hashed from the job's id. Only a job that continues another trace (a
//! client's `traceparent`, or the attempt of the job that made it) keeps
//! its context in its row, because that cannot be made again from its id.

use sha2::{Digest, Sha256};
use std::fmt;

/// A span's place in a trace: its trace, its own id, and whether it is
/// sampled (recorded). Parsed from and written as a W3C `traceparent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceParent {
    pub trace_id: [u8; 16],
    pub span_id: [u8; 8],
    pub sampled: bool,
}

/// Why a `traceparent` was not taken. A request's is then ignored and
/// its job starts a trace of its own, as the W3C recommendation says.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BadTraceParent {
    #[error("a traceparent is `00-<32 hex>-<16 hex>-<2 hex>` in lower case")]
    Form,
    #[error("version ff is never valid")]
    Version,
    #[error("a trace id or span id of all zeros is not valid")]
    Zero,
}

/// How long a `traceparent` of version 00 is.
const LEN: usize = 55;

fn hex_into(s: &str, out: &mut [u8]) -> Result<(), BadTraceParent> {
    if s.len() != out.len() * 2 || s.bytes().any(|b| !matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(BadTraceParent::Form);
    }
    hex::decode_to_slice(s, out).map_err(|_| BadTraceParent::Form)
}

impl TraceParent {
    /// Reads a `traceparent` header. A later version than 00 is read as
    /// 00 where it has more after the flags (the W3C rule for versions
    /// this reader does not know).
    pub fn parse(s: &str) -> Result<TraceParent, BadTraceParent> {
        let s = s.trim();
        let version = s.get(..2).ok_or(BadTraceParent::Form)?;
        let mut v = [0u8; 1];
        hex_into(version, &mut v)?;
        let head = match (v[0], s.len()) {
            (0xff, _) => return Err(BadTraceParent::Version),
            (0, LEN) => s,
            (0, _) => return Err(BadTraceParent::Form),
            (_, n) if n == LEN => s,
            (_, n) if n > LEN && s.as_bytes()[LEN] == b'-' => &s[..LEN],
            _ => return Err(BadTraceParent::Form),
        };
        let parts: Vec<&str> = head.split('-').collect();
        let [_, trace, span, flags] = parts[..] else {
            return Err(BadTraceParent::Form);
        };
        let mut t = TraceParent {
            trace_id: [0; 16],
            span_id: [0; 8],
            sampled: false,
        };
        hex_into(trace, &mut t.trace_id)?;
        hex_into(span, &mut t.span_id)?;
        let mut f = [0u8; 1];
        hex_into(flags, &mut f)?;
        if t.trace_id == [0; 16] || t.span_id == [0; 8] {
            return Err(BadTraceParent::Zero);
        }
        t.sampled = f[0] & 1 == 1;
        Ok(t)
    }

    /// The context of a job: the one kept in its row, or the one its id
    /// makes (`stored` unreadable is taken as absent: a row is never
    /// written with one, so it is not worth failing a claim over).
    pub fn of_job(id: &str, stored: Option<&str>) -> TraceParent {
        stored
            .and_then(|s| TraceParent::parse(s).ok())
            .unwrap_or_else(|| TraceParent::for_job(id, None))
    }

    /// The context a new job takes: the span of its enqueue, in the trace
    /// of `parent` if it continues one, else in a trace of its own whose
    /// id is the job's.
    pub fn for_job(id: &str, parent: Option<&TraceParent>) -> TraceParent {
        let span_id = hashed_span_id(id);
        match parent {
            Some(p) => TraceParent {
                trace_id: p.trace_id,
                span_id,
                sampled: p.sampled,
            },
            None => TraceParent {
                trace_id: job_trace_id(id),
                span_id,
                sampled: true,
            },
        }
    }

    /// What a new job keeps in its row: its context when it continues a
    /// trace (`parent`), else nothing (its id makes it again). Boxed: most
    /// jobs have none, and a new job travels in the store's writes.
    pub fn stored_for(id: &str, parent: Option<&TraceParent>) -> Option<Box<TraceParent>> {
        parent.map(|p| Box::new(TraceParent::for_job(id, Some(p))))
    }

    /// A span in the same trace whose id is made again from `label`
    /// alone: a span that is sent once but named earlier (a workflow
    /// stage's, which its attempts are under), with no stored id.
    pub fn derived(&self, label: &str) -> TraceParent {
        TraceParent {
            span_id: hashed("span", label),
            ..*self
        }
    }

    /// A new span in the same trace.
    pub fn child(&self) -> TraceParent {
        TraceParent {
            span_id: new_span_id(),
            ..*self
        }
    }
}

impl fmt::Display for TraceParent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "00-{}-{}-{:02x}",
            hex::encode(self.trace_id),
            hex::encode(self.span_id),
            u8::from(self.sampled)
        )
    }
}

/// A job's own trace id: its ULID's 128 bits, or a hash of an id that is
/// not one.
fn job_trace_id(id: &str) -> [u8; 16] {
    match ulid::Ulid::from_string(id) {
        Ok(u) if u.0 != 0 => u.0.to_be_bytes(),
        _ => {
            let d = Sha256::digest(format!("taskbox trace {id}"));
            let mut t = [0u8; 16];
            t.copy_from_slice(&d[..16]);
            t
        }
    }
}

/// The id of the span of a job's enqueue, from the job's id.
fn hashed_span_id(id: &str) -> [u8; 8] {
    hashed("enqueue", id)
}

/// A span id hashed from what it is of (`what`) and a name, never all
/// zeros.
fn hashed(what: &str, name: &str) -> [u8; 8] {
    let d = Sha256::digest(format!("taskbox {what} {name}"));
    let mut s = [0u8; 8];
    s.copy_from_slice(&d[..8]);
    if s == [0; 8] {
        s[7] = 1;
    }
    s
}

/// A random span id, never all zeros.
pub fn new_span_id() -> [u8; 8] {
    let mut s = [0u8; 8];
    if getrandom::fill(&mut s).is_err() || s == [0; 8] {
        // No randomness: a clock's nanoseconds still tell spans apart.
        let n = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1);
        s = n.max(1).to_be_bytes();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    #[test]
    fn a_traceparent_is_read_and_written_back() {
        let t = TraceParent::parse(GOOD).unwrap();
        assert!(t.sampled);
        assert_eq!(t.to_string(), GOOD);
        let unsampled = GOOD.replace("-01", "-00");
        assert!(!TraceParent::parse(&unsampled).unwrap().sampled);
    }

    #[test]
    fn bad_traceparents_are_refused() {
        let cases: &[(&str, BadTraceParent)] = &[
            ("", BadTraceParent::Form),
            ("00", BadTraceParent::Form),
            (&GOOD.to_uppercase(), BadTraceParent::Form),
            (&GOOD.replace("00-4b", "ff-4b"), BadTraceParent::Version),
            (&format!("{GOOD}-extra"), BadTraceParent::Form),
            (&GOOD.replace('-', "_"), BadTraceParent::Form),
            (
                &GOOD.replace("4bf92f3577b34da6a3ce929d0e0e4736", &"0".repeat(32)),
                BadTraceParent::Zero,
            ),
            (
                &GOOD.replace("00f067aa0ba902b7", &"0".repeat(16)),
                BadTraceParent::Zero,
            ),
            (
                &GOOD.replace("00f067aa0ba902b7", "00f067aa0ba902bg"),
                BadTraceParent::Form,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1",
                BadTraceParent::Form,
            ),
            (
                "xx-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
                BadTraceParent::Form,
            ),
            (
                "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01é",
                BadTraceParent::Form,
            ),
        ];
        for (s, want) in cases {
            assert_eq!(TraceParent::parse(s).as_ref(), Err(want), "{s:?}");
        }
    }

    #[test]
    fn a_later_version_is_read_as_far_as_it_is_known() {
        let later = format!("{}-what-comes-next", GOOD.replacen("00", "01", 1));
        let t = TraceParent::parse(&later).unwrap();
        assert_eq!(hex::encode(t.span_id), "00f067aa0ba902b7");
        // Not followed by a dash: not a field of a later version.
        assert!(TraceParent::parse(&format!("{}x", GOOD.replacen("00", "01", 1))).is_err());
    }

    #[test]
    fn a_jobs_own_trace_is_its_id_and_continuing_one_keeps_its_trace() {
        let id = crate::job::new_id();
        let own = TraceParent::for_job(&id, None);
        assert_eq!(
            own.trace_id,
            ulid::Ulid::from_string(&id).unwrap().0.to_be_bytes()
        );
        assert_eq!(TraceParent::of_job(&id, None), own);
        assert_eq!(TraceParent::stored_for(&id, None), None);
        let client = TraceParent::parse(GOOD).unwrap();
        let stored = TraceParent::stored_for(&id, Some(&client))
            .unwrap()
            .to_string();
        let cont = TraceParent::of_job(&id, Some(&stored));
        assert_eq!(cont.trace_id, client.trace_id);
        assert_eq!(cont.span_id, own.span_id);
        assert_ne!(cont.span_id, client.span_id);
        // Another job has other ids; a child another span.
        let other = TraceParent::for_job(&crate::job::new_id(), None);
        assert_ne!(other.trace_id, own.trace_id);
        assert_ne!(own.child().span_id, own.span_id);
        assert_eq!(own.child().trace_id, own.trace_id);
        // A derived span is the same each time, and another label's is not.
        let step = own.derived("step 0");
        assert_eq!(step, own.derived("step 0"));
        assert_eq!(step.trace_id, own.trace_id);
        assert_ne!(step.span_id, own.derived("step 1").span_id);
        assert_ne!(step.span_id, own.span_id);
        // An id that is not a ULID still has a trace.
        assert_ne!(TraceParent::for_job("not-a-ulid", None).trace_id, [0; 16]);
    }
}
