//! The on-disk cache of compiled artifacts, keyed by digest and engine
//! settings. Loading native code is `unsafe`, so an artifact is offered to
//! the engine only if it carries a MAC made with this cache's secret key:
//! anything corrupted or not written by us is deleted and compiled again.
//! Its size is bounded: past its most, the artifacts used longest ago go
//! first (a load touches the file, so its time says when it was used), and
//! a collected component's artifact goes with it (`discard`).

use crate::digest::Digest;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 8] = b"TBXART1\0";
const MAC_LEN: usize = 32;
const KEY_FILE: &str = "cache.key";

/// Compiled artifacts of one engine configuration.
#[derive(Debug, Clone)]
pub struct ArtifactCache {
    dir: PathBuf,
    key: [u8; 32],
    max_bytes: u64,
    /// What this process knows the directory holds; the directory itself
    /// is read again when it passes the most (other processes may share
    /// it).
    held: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

/// What [`ArtifactCache::load`] found.
#[derive(Debug)]
pub enum Cached {
    /// An artifact whose MAC checks out.
    Hit(Vec<u8>),
    Miss,
    /// There was a file, but it was corrupt or forged; it has been removed.
    Rejected(String),
}

impl ArtifactCache {
    /// Bytes the cache keeps at most, unless the server says
    /// (`--compile-cache-max-mb`).
    pub const DEFAULT_MAX_BYTES: u64 = 4 << 30;

    /// Opens (creating if needed) the cache under `root` for one engine
    /// fingerprint, holding at most `max_bytes` of artifacts.
    pub fn open(root: &Path, fingerprint: &str, max_bytes: u64) -> io::Result<Self> {
        let dir = root.join(fingerprint);
        fs::create_dir_all(&dir)?;
        let key = load_or_create_key(&root.join(KEY_FILE))?;
        let cache = ArtifactCache {
            dir,
            key,
            max_bytes,
            held: Default::default(),
        };
        let held = cache.artifacts().iter().map(|(_, len, _)| len).sum();
        cache.held.store(held, std::sync::atomic::Ordering::Relaxed);
        Ok(cache)
    }

    /// Every artifact file: its path, length and when it was last used.
    fn artifacts(&self) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter(|e| e.path().extension().is_some_and(|x| x == "cwasm"))
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((e.path(), m.len(), m.modified().ok()?))
            })
            .collect()
    }

    /// Bytes of artifacts held now, as this process counts them.
    pub fn held_bytes(&self) -> u64 {
        self.held.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Deletes the artifacts used longest ago until what is left and
    /// `room` more fit in the most. Stores are one per compile, so reading
    /// the directory each time costs little.
    fn trim(&self, room: u64) {
        let mut all = self.artifacts();
        let mut held: u64 = all.iter().map(|(_, len, _)| len).sum();
        let goal = self.max_bytes.saturating_sub(room);
        all.sort_by_key(|(_, _, used)| *used);
        for (path, len, _) in all {
            if held <= goal {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                held -= len;
            }
        }
        self.held.store(held, std::sync::atomic::Ordering::Relaxed);
    }

    fn path(&self, digest: &Digest) -> PathBuf {
        self.dir.join(format!("{}.cwasm", digest.hex()))
    }

    fn mac(&self, digest: &Digest, artifact: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length");
        mac.update(digest.as_bytes());
        mac.update(artifact);
        mac
    }

    pub fn load(&self, digest: &Digest) -> Cached {
        let path = self.path(digest);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Cached::Miss,
            Err(e) => return Cached::Rejected(format!("unreadable: {e}")),
        };
        let verdict = match bytes.strip_prefix(MAGIC.as_slice()) {
            Some(rest) if rest.len() >= MAC_LEN => {
                let (tag, artifact) = rest.split_at(MAC_LEN);
                match self.mac(digest, artifact).verify_slice(tag) {
                    Ok(()) => {
                        // Used now: the last to go when the cache is trimmed.
                        let _ = fs::File::options()
                            .write(true)
                            .open(&path)
                            .and_then(|f| f.set_modified(std::time::SystemTime::now()));
                        return Cached::Hit(artifact.to_vec());
                    }
                    Err(_) => "its MAC does not match".to_owned(),
                }
            }
            _ => "it has no valid header".to_owned(),
        };
        let _ = fs::remove_file(&path);
        Cached::Rejected(verdict)
    }

    /// Writes atomically: a reader sees the old file, the new one, or none.
    /// An artifact larger than the whole cache is not kept; one that
    /// would take the cache past its most makes room first.
    pub fn store(&self, digest: &Digest, artifact: &[u8]) -> io::Result<()> {
        let len = (MAGIC.len() + MAC_LEN + artifact.len()) as u64;
        if len > self.max_bytes {
            return Err(io::Error::other(format!(
                "the artifact is {len} bytes, more than the cache's most of {} bytes",
                self.max_bytes
            )));
        }
        if self.held_bytes().saturating_add(len) > self.max_bytes {
            self.trim(len);
        }
        let tag = self.mac(digest, artifact).finalize().into_bytes();
        let path = self.path(digest);
        // Unique per writer: two sandboxes may store the same digest at once.
        let mut salt = [0u8; 8];
        getrandom::fill(&mut salt).map_err(|e| io::Error::other(e.to_string()))?;
        let tmp = path.with_extension(format!("tmp{}", hex::encode(salt)));
        let mut f = fs::File::create(&tmp)?;
        f.write_all(MAGIC)?;
        f.write_all(&tag)?;
        f.write_all(artifact)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, &path)?;
        self.held
            .fetch_add(len, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }

    /// Forgets an artifact: one the engine refused after its MAC checked
    /// out (written by another wasmtime build sharing the directory), or a
    /// collected component's.
    pub fn discard(&self, digest: &Digest) {
        let path = self.path(digest);
        let len = fs::metadata(&path).map_or(0, |m| m.len());
        if fs::remove_file(&path).is_ok() {
            let held = &self.held;
            let _ = held.fetch_update(
                std::sync::atomic::Ordering::Relaxed,
                std::sync::atomic::Ordering::Relaxed,
                |h| Some(h.saturating_sub(len)),
            );
        }
    }

    /// Where the artifact of `digest` lives (tests corrupt it on purpose).
    pub fn artifact_path(&self, digest: &Digest) -> PathBuf {
        self.path(digest)
    }
}

fn load_or_create_key(path: &Path) -> io::Result<[u8; 32]> {
    if let Ok(bytes) = fs::read(path) {
        if let Ok(key) = <[u8; 32]>::try_from(bytes.as_slice()) {
            return Ok(key);
        }
        // Damaged: replaced below; artifacts under the old key fail their MAC.
        fs::remove_file(path)?;
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| io::Error::other(e.to_string()))?;
    let mut salt = [0u8; 8];
    getrandom::fill(&mut salt).map_err(|e| io::Error::other(e.to_string()))?;
    let tmp = path.with_extension(format!("tmp{}", hex::encode(salt)));
    let mut opts = fs::OpenOptions::new();
    opts.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let mut f = opts.open(&tmp)?;
    f.write_all(&key)?;
    f.sync_all()?;
    drop(f);
    // A hard link appears whole or not at all and never replaces a file, so
    // when two sandboxes race here both end up with the winner's key.
    let linked = fs::hard_link(&tmp, path);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            let bytes = fs::read(path)?;
            return <[u8; 32]>::try_from(bytes.as_slice())
                .map_err(|_| io::Error::other("the compile cache's key file is damaged"));
        }
        Err(e) => return Err(e),
    }
    Ok(key)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_rejects_tampering() {
        let dir = tempfile::tempdir().unwrap();
        let cache =
            ArtifactCache::open(dir.path(), "engine", ArtifactCache::DEFAULT_MAX_BYTES).unwrap();
        let d = Digest::of(b"component");
        assert!(matches!(cache.load(&d), Cached::Miss));
        cache.store(&d, b"native code").unwrap();
        assert!(matches!(cache.load(&d), Cached::Hit(b) if b == b"native code"));

        let path = cache.artifact_path(&d);
        let mut bytes = fs::read(&path).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        fs::write(&path, bytes).unwrap();
        assert!(matches!(cache.load(&d), Cached::Rejected(_)));
        assert!(!path.exists(), "a rejected artifact is removed");

        // Another cache's key cannot vouch for this one's artifacts.
        let other = tempfile::tempdir().unwrap();
        let forger =
            ArtifactCache::open(other.path(), "engine", ArtifactCache::DEFAULT_MAX_BYTES).unwrap();
        forger.store(&d, b"evil").unwrap();
        fs::copy(forger.artifact_path(&d), &path).unwrap();
        assert!(matches!(cache.load(&d), Cached::Rejected(_)));
    }

    /// Past its most, the artifacts used longest ago go first; a load
    /// counts as a use; one larger than the whole cache is not kept.
    #[test]
    fn the_cache_holds_at_most_its_bytes_oldest_use_first() {
        let dir = tempfile::tempdir().unwrap();
        let per = (MAGIC.len() + MAC_LEN + 1000) as u64;
        let cache = ArtifactCache::open(dir.path(), "engine", 3 * per).unwrap();
        let d = |n: u8| Digest::of(&[n]);
        let at = |secs: u64| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
        for n in 0..3 {
            cache.store(&d(n), &[n; 1000]).unwrap();
            let f = fs::File::options()
                .write(true)
                .open(cache.artifact_path(&d(n)))
                .unwrap();
            f.set_modified(at(1000 + u64::from(n))).unwrap();
        }
        assert_eq!(cache.held_bytes(), 3 * per);
        // 0 is used now: 1 is the one used longest ago.
        assert!(matches!(cache.load(&d(0)), Cached::Hit(_)));
        cache.store(&d(3), &[3; 1000]).unwrap();
        assert!(
            matches!(cache.load(&d(1)), Cached::Miss),
            "the oldest use went"
        );
        for n in [0, 2, 3] {
            assert!(matches!(cache.load(&d(n)), Cached::Hit(_)), "{n} stays");
        }
        assert!(cache.held_bytes() <= 3 * per);
        assert!(cache.store(&d(9), &vec![9; 4000]).is_err());
        // A reopened cache counts what is there.
        let again = ArtifactCache::open(dir.path(), "engine", 3 * per).unwrap();
        assert_eq!(again.held_bytes(), cache.held_bytes());
        again.discard(&d(0));
        assert_eq!(again.held_bytes(), 2 * per);
    }
}
