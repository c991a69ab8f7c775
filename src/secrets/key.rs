//! The server's secrets key: 32 random bytes in a file of their own
//! (`--secrets-key-file`, by default `DATA_DIR/secrets.key`), read at
//! start, or made at the first one, readable by its owner only.

use super::SecretsError;
use std::io::{Read, Write};
use std::path::Path;
use zeroize::Zeroizing;

/// Bytes of a key (XChaCha20-Poly1305's).
pub const KEY_LEN: usize = 32;
/// The key file's name in the data dir, unless told otherwise.
pub const DEFAULT_FILE: &str = "secrets.key";

/// The key. Its `Debug` does not show it, and its bytes are wiped when it
/// is dropped.
#[derive(Clone)]
pub struct SecretsKey(Zeroizing<[u8; KEY_LEN]>);

impl std::fmt::Debug for SecretsKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretsKey(…)")
    }
}

impl SecretsKey {
    /// A fresh key from the system's random source.
    pub fn generate() -> std::io::Result<SecretsKey> {
        let mut key = Zeroizing::new([0u8; KEY_LEN]);
        getrandom::fill(key.as_mut_slice()).map_err(|e| {
            std::io::Error::other(format!("the system's random source failed: {e}"))
        })?;
        Ok(SecretsKey(key))
    }

    pub(super) fn bytes(&self) -> &[u8; KEY_LEN] {
        &self.0
    }
}

/// Reads the key at `path`, or makes it there when there is none: `true`
/// when it was made. Two processes starting at once agree on one key: the
/// file appears whole or not at all (written aside, then linked in only
/// where no file is), and the one that finds it made reads it.
pub fn load_or_create(path: &Path) -> Result<(SecretsKey, bool), SecretsError> {
    if let Some(key) = read(path)? {
        return Ok((key, false));
    }
    let created = |source| SecretsError::KeyCreate {
        path: path.to_owned(),
        source,
    };
    let key = SecretsKey::generate().map_err(created)?;
    if write_new(path, &key).map_err(created)? {
        return Ok((key, true));
    }
    // Another process made it first: its key is the one.
    match read(path)? {
        Some(key) => Ok((key, false)),
        None => Err(created(std::io::Error::other(
            "it was made by another process and is gone again",
        ))),
    }
}

/// The key in the file; `None` when there is no file.
fn read(path: &Path) -> Result<Option<SecretsKey>, SecretsError> {
    let unreadable = |source| SecretsError::KeyUnreadable {
        path: path.to_owned(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(unreadable(e)),
    };
    let meta = file.metadata().map_err(unreadable)?;
    if !meta.is_file() {
        return Err(unreadable(std::io::Error::other("it is not a file")));
    }
    warn_if_shared(path, &meta);
    // One byte more than a key, so that a longer file is told from one.
    let mut bytes = Zeroizing::new(Vec::with_capacity(KEY_LEN + 1));
    file.take(KEY_LEN as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    let key: [u8; KEY_LEN] =
        bytes
            .as_slice()
            .try_into()
            .map_err(|_| SecretsError::KeyWrongLength {
                path: path.to_owned(),
                len: meta.len(),
            })?;
    Ok(Some(SecretsKey(Zeroizing::new(key))))
}

/// A key file others may read is still used (refusing to start would
/// stop a working server over a chmod), but said.
fn warn_if_shared(path: &Path, meta: &std::fs::Metadata) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            tracing::warn!(
                path = %path.display(),
                mode = format!("{mode:o}"),
                "the secrets key file may be read by others than its owner; chmod 600 it"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta);
}

/// Writes the key to a new file at `path`, readable by its owner only:
/// `false`, writing nothing, when a file is there already.
fn write_new(path: &Path, key: &SecretsKey) -> std::io::Result<bool> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".secrets-key-").suffix(".tmp");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o600));
    }
    let mut tmp = builder.tempfile_in(dir)?;
    tmp.write_all(key.bytes())?;
    tmp.as_file().sync_all()?;
    match tmp.persist_noclobber(path) {
        Ok(_) => {
            // The file's name is durable only once its directory is.
            #[cfg(unix)]
            std::fs::File::open(dir)?.sync_all()?;
            Ok(true)
        }
        Err(e) if e.error.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e.error),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_owner_only_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.key");
        let (made, created) = load_or_create(&path).unwrap();
        assert!(created);
        assert_eq!(std::fs::read(&path).unwrap(), made.bytes().to_vec());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let (again, created) = load_or_create(&path).unwrap();
        assert!(!created);
        assert_eq!(again.bytes(), made.bytes());
        // Nothing else was left in the directory.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn processes_racing_agree_on_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.key");
        let racers: Vec<_> = (0..8)
            .map(|_| {
                let path = path.clone();
                std::thread::spawn(move || load_or_create(&path).unwrap())
            })
            .collect();
        let keys: Vec<(SecretsKey, bool)> = racers.into_iter().map(|t| t.join().unwrap()).collect();
        assert_eq!(keys.iter().filter(|(_, made)| *made).count(), 1);
        assert!(keys.iter().all(|(k, _)| k.bytes() == keys[0].0.bytes()));
        assert_eq!(std::fs::read(&path).unwrap(), keys[0].0.bytes().to_vec());
    }

    #[test]
    fn a_file_of_the_wrong_length_is_refused_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("secrets.key");
        for len in [0, 31, 33, 64] {
            std::fs::write(&path, vec![1u8; len]).unwrap();
            let err = load_or_create(&path).unwrap_err();
            let said = err.to_string();
            assert!(
                matches!(err, SecretsError::KeyWrongLength { len: l, .. } if l == len as u64),
                "{said}"
            );
            assert!(said.contains(&path.display().to_string()), "{said}");
            assert!(said.contains("move it away"), "{said}");
            assert_eq!(std::fs::read(&path).unwrap().len(), len, "left as it was");
        }
    }

    #[test]
    fn unreadable_or_uncreatable_files_say_where() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be.
        let err = load_or_create(dir.path()).unwrap_err();
        assert!(matches!(err, SecretsError::KeyUnreadable { .. }), "{err}");
        assert!(err.to_string().contains("--secrets-key-file"), "{err}");
        // A directory that does not exist.
        let path = dir.path().join("no/such/dir/secrets.key");
        let err = load_or_create(&path).unwrap_err();
        assert!(matches!(err, SecretsError::KeyCreate { .. }), "{err}");
        assert!(
            err.to_string().contains(&path.display().to_string()),
            "{err}"
        );
    }

    #[test]
    fn the_key_is_not_shown_by_debug() {
        let key = SecretsKey(Zeroizing::new([0xAB; KEY_LEN]));
        let shown = format!("{key:?}");
        assert_eq!(shown, "SecretsKey(…)");
        assert!(!shown.to_lowercase().contains("ab"));
    }
}
