//! Waiting for a job's attempt to end, without polling: whoever waits
//! registers the job's id, and the finalizer rings it when it writes that
//! job's end. A cancel or a run-now waits this way; the waiter still looks
//! at the store now and then, for ends this process did not write.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

#[derive(Default)]
struct Inner {
    ids: Mutex<HashMap<String, (Arc<Notify>, usize)>>,
    /// How many ids are watched: the finalizer's fast way past.
    watched: AtomicUsize,
}

/// Cheap to clone.
#[derive(Clone, Default)]
pub struct Watch(Arc<Inner>);

/// One waiter's registration; dropping it stops watching.
pub struct Watcher {
    watch: Watch,
    id: String,
    notify: Arc<Notify>,
}

impl Watch {
    pub fn watch(&self, id: &str) -> Watcher {
        let mut ids = self.0.ids.lock().unwrap_or_else(|p| p.into_inner());
        let entry = ids.entry(id.to_owned()).or_insert_with(|| {
            self.0.watched.fetch_add(1, Ordering::Relaxed);
            (Arc::new(Notify::new()), 0)
        });
        entry.1 += 1;
        Watcher {
            watch: self.clone(),
            id: id.to_owned(),
            notify: entry.0.clone(),
        }
    }

    /// The job's attempt ended (or it changed in a way a waiter cares for).
    pub fn ended(&self, id: &str) {
        if self.0.watched.load(Ordering::Relaxed) == 0 {
            return;
        }
        let ids = self.0.ids.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((notify, _)) = ids.get(id) {
            notify.notify_waiters();
        }
    }
}

impl Watcher {
    /// Resolves at the next `ended` of the job after it is created; create
    /// it (and `enable` it) before looking at the job, so no end is missed.
    pub fn notified(&self) -> tokio::sync::futures::Notified<'_> {
        self.notify.notified()
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        let mut ids = self.watch.0.ids.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(entry) = ids.get_mut(&self.id) {
            entry.1 -= 1;
            if entry.1 == 0 {
                ids.remove(&self.id);
                self.watch.0.watched.fetch_sub(1, Ordering::Relaxed);
            }
        }
    }
}
