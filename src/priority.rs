//! Which threads the OS runs first. Work whose cost a tenant decides (its
//! guests, its costliest schema checks) runs below the server's priority,
//! so a tenant that makes such work long slows itself, not every other
//! tenant's jobs.

/// Niceness of lowered threads (0 is the default, 19 the lowest).
const NICENESS: i32 = 10;

/// Lowers the calling thread's priority. Without privilege a thread cannot
/// raise it again, so only threads that do nothing else call this.
pub fn lower_this_thread() {
    set_this_threads_niceness(NICENESS);
}

/// Sets the calling thread's niceness (Linux only; elsewhere, nothing).
fn set_this_threads_niceness(niceness: i32) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority reads no memory of ours; on Linux, `who` 0
        // with PRIO_PROCESS is the calling thread.
        let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, niceness) };
        if r != 0 {
            tracing::debug!(error = %std::io::Error::last_os_error(), "cannot change a thread's priority");
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = niceness;
}

/// Runs `f` on a thread of its own at the lowered priority. `None` when no
/// thread could be started or `f` panicked. A caller that gives up does
/// not stop `f`: whatever `f` owns (a permit, say) is held until it ends.
pub async fn run_lowered<R: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> R + Send + 'static,
) -> Option<R> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            lower_this_thread();
            let _ = tx.send(f());
        });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "cannot start a thread");
        return None;
    }
    rx.await.ok()
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn runs_the_work_and_survives_its_panic() {
        assert_eq!(super::run_lowered("t", || 6 * 7).await, Some(42));
        assert_eq!(
            super::run_lowered("t", || -> u8 { panic!("boom") }).await,
            None
        );
    }

    #[cfg(target_os = "linux")]
    #[tokio::test]
    async fn the_work_runs_at_a_lower_priority() {
        // SAFETY: as in lower_this_thread; errno is read through the OS.
        let niceness = || unsafe { libc::getpriority(libc::PRIO_PROCESS, 0) };
        let ours = niceness();
        let theirs = super::run_lowered("t", niceness).await.unwrap();
        assert_eq!(theirs, (ours + super::NICENESS).min(19).max(ours));
    }
}
