//! The on-disk cache of compiled artifacts, keyed by digest and engine
//! settings. Loading native code is `unsafe`, so an artifact is offered to
//! the engine only if it carries a MAC made with this cache's secret key:
//! anything corrupted or not written by us is deleted and compiled again.

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
    /// Opens (creating if needed) the cache under `root` for one engine fingerprint.
    pub fn open(root: &Path, fingerprint: &str) -> io::Result<Self> {
        let dir = root.join(fingerprint);
        fs::create_dir_all(&dir)?;
        let key = load_or_create_key(&root.join(KEY_FILE))?;
        Ok(ArtifactCache { dir, key })
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
                    Ok(()) => return Cached::Hit(artifact.to_vec()),
                    Err(_) => "its MAC does not match".to_owned(),
                }
            }
            _ => "it has no valid header".to_owned(),
        };
        let _ = fs::remove_file(&path);
        Cached::Rejected(verdict)
    }

    /// Writes atomically: a reader sees the old file, the new one, or none.
    pub fn store(&self, digest: &Digest, artifact: &[u8]) -> io::Result<()> {
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
        fs::rename(&tmp, &path)
    }

    /// Forgets an artifact the engine refused after its MAC checked out
    /// (e.g. written by another wasmtime build sharing the directory).
    pub fn discard(&self, digest: &Digest) {
        let _ = fs::remove_file(self.path(digest));
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
        let cache = ArtifactCache::open(dir.path(), "engine").unwrap();
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
        let forger = ArtifactCache::open(other.path(), "engine").unwrap();
        forger.store(&d, b"evil").unwrap();
        fs::copy(forger.artifact_path(&d), &path).unwrap();
        assert!(matches!(cache.load(&d), Cached::Rejected(_)));
    }
}
