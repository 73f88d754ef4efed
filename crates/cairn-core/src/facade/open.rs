//! The [`Cairn`] facade, opening the archive: the data dir, its config, the shared connection and
//! the writer's.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::archive::store::{DB_FILE, Store};
use crate::config::{self, Config};
use crate::{Cairn, Error, Result};
use crate::{private, semantic};

/// Whether `data_dir` holds an archive: a `cairn.db` with something in it (an empty file, left
/// by a copy or a create that went no further, holds none, and a check must not fill it).
pub(super) fn holds_archive(data_dir: &Path) -> bool {
    std::fs::metadata(data_dir.join(DB_FILE)).is_ok_and(|m| m.len() > 0)
}

impl Cairn {
    /// Open (creating if needed) the archive in `data_dir`. A data dir that cannot be written
    /// is opened read-only when it already holds an archive.
    ///
    /// The data dir is the user's alone ([`private`]): created 0700, and on a writable open
    /// what is in it is tightened (its top level every time; everything below when the dir or
    /// the database was open to others, as an older Cairn left them).
    pub fn open(data_dir: impl Into<PathBuf>) -> Result<Cairn> {
        let data_dir = data_dir.into();
        let config = Config::load(&data_dir)?;
        Cairn::open_with(data_dir, config)
    }

    /// [`Cairn::open`] even when `config.toml` does not load: then on the default settings,
    /// with the config's error beside it (what `doctor` reports first). Any other failure to
    /// open is an error as with `open`.
    pub fn open_despite_config(data_dir: impl Into<PathBuf>) -> Result<(Cairn, Option<Error>)> {
        let data_dir = data_dir.into();
        match Config::load(&data_dir) {
            Ok(config) => Ok((Cairn::open_with(data_dir, config)?, None)),
            Err(e @ Error::Config { .. }) => {
                Ok((Cairn::open_with(data_dir, Config::default())?, Some(e)))
            }
            Err(e) => Err(e),
        }
    }

    /// [`Cairn::open_despite_config`] that creates nothing: a data dir holding no archive (a
    /// fresh machine, a mistyped `--data-dir`) is read as an empty one kept in memory, and the
    /// facade is read-only. What `doctor` checks with.
    ///
    /// A database too damaged to open (a truncated file, one that is no database) is read the
    /// same way, so the checks still run; the error it gave is the third part, for the
    /// archive's own check to say what is wrong and how to recover.
    pub(crate) fn open_to_check(
        data_dir: PathBuf,
    ) -> Result<(Cairn, Option<Error>, Option<Error>)> {
        let db = data_dir.join(DB_FILE);
        let mut unopened = None;
        if holds_archive(&data_dir) {
            match Cairn::open_despite_config(data_dir.clone()) {
                Err(e) if e.kind() == crate::error::ErrorKind::Corrupt => unopened = Some(e),
                opened => return opened.map(|(cairn, config)| (cairn, config, None)),
            }
        }
        let (config, config_error) = match Config::load(&data_dir) {
            Ok(config) => (config, None),
            Err(e @ Error::Config { .. }) => (Config::default(), Some(e)),
            Err(e) => return Err(e),
        };
        let semantic = semantic::Runtime::new(&config.embeddings, &data_dir);
        let cairn = Cairn {
            store: Mutex::new(Store::empty(&db)?),
            data_dir,
            config,
            read_only: true,
            no_room: None,
            semantic,
        };
        Ok((cairn, config_error, unopened))
    }

    /// True when the data dir holds no archive (now): a facade opened by `doctor` or for
    /// agents then reads an empty one in memory ([`Cairn::open_to_check`]).
    pub fn holds_no_archive(&self) -> bool {
        !holds_archive(&self.data_dir)
    }

    /// True when this facade reads an empty archive in memory, not the data dir's
    /// ([`Cairn::open_to_check`]: none there, or one too damaged to open).
    pub(crate) fn reads_in_memory(&self) -> bool {
        self.store().in_memory()
    }

    fn open_with(data_dir: PathBuf, config: Config) -> Result<Cairn> {
        let db = data_dir.join(DB_FILE);
        let real = private::resolved(&data_dir);
        let loose = private::is_open(&real) || private::is_open(&real.join(DB_FILE));
        let created = private::create_dir_all(&data_dir);
        let mut no_room = None;
        let (store, read_only) = match created
            .map_err(|e| Error::write_in(&data_dir, &data_dir, e))
            .and_then(|_| Store::open(&db))
        {
            Ok(store) => (store, false),
            Err(err) if db.exists() => match Store::open_read_only(&db) {
                Ok(store) => {
                    if let Error::DiskFull { file, why, .. } = &err {
                        no_room = Some((file.clone(), *why));
                    }
                    (store, true)
                }
                Err(_) => return Err(err),
            },
            Err(err) => return Err(err),
        };
        if !read_only {
            for (path, e) in private::tighten_data_dir(&data_dir, loose) {
                tracing::warn!("cannot make {} private: {e}", path.display());
            }
        }
        let semantic = semantic::Runtime::new(&config.embeddings, &data_dir);
        Ok(Cairn {
            data_dir,
            config,
            store: Mutex::new(store),
            read_only,
            no_room,
            semantic,
        })
    }

    /// `$CAIRN_DATA_DIR`, else the platform data dir (`~/.local/share/cairn` on Linux).
    pub fn default_data_dir() -> Option<PathBuf> {
        match std::env::var_os("CAIRN_DATA_DIR") {
            Some(dir) if !dir.is_empty() => Some(PathBuf::from(dir)),
            _ => dirs::data_dir().map(|d| d.join("cairn")),
        }
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// `<data dir>/config.toml`, named by configuration errors.
    pub fn config_path(&self) -> PathBuf {
        self.data_dir.join(config::CONFIG_FILE)
    }

    /// Edit `config.toml` as text: `edit` gets the file (empty when there is none) and gives
    /// it back changed, keeping comments, order and every key it does not set; the result
    /// must load ([`Config::parse`]) and pass `check`, or nothing is written. Done under the
    /// data dir's `config.lock` from read to rename, so two writers (the desktop's Settings and
    /// a CLI command, each setting its own table) never lose each other's change; the file is
    /// replaced atomically ([`crate::atomic::replace`]), 0600 when new.
    pub(crate) fn edit_config(
        &self,
        edit: impl FnOnce(&str) -> std::result::Result<String, String>,
        check: impl FnOnce(&Config) -> Result<()>,
    ) -> Result<Config> {
        self.writable()?;
        let lock = crate::archive::capture::CaptureLock::open_named(&self.data_dir, "config.lock")?;
        let _held = lock.lock()?;
        let (edited, config) = self.edited_config(edit, check)?;
        crate::atomic::replace(
            &self.config_path(),
            edited.as_bytes(),
            crate::private::FILE_MODE,
        )
        .map_err(|e| Error::write_in(&self.data_dir, &e.path, e.source))?;
        Ok(config)
    }

    /// What [`Cairn::edit_config`] would write, and the config it loads as, without writing it
    /// (a form's "Test" reads the setup it holds this way).
    pub(crate) fn edited_config(
        &self,
        edit: impl FnOnce(&str) -> std::result::Result<String, String>,
        check: impl FnOnce(&Config) -> Result<()>,
    ) -> Result<(String, Config)> {
        let path = self.config_path();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(Error::Read { path, source: e }),
        };
        let edited = edit(&text).map_err(|message| Error::Config {
            path: path.clone(),
            message,
        })?;
        let config = Config::parse(&edited, &path)?;
        check(&config)?;
        Ok((edited, config))
    }

    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The shared connection, on the archive's database as it is now: when a rebuild in another
    /// process (`cairn reindex --from-copies`) has swapped a new `cairn.db` in since it was
    /// opened, it is first opened again there, set as it was ([`Store::reopened`]), so a
    /// long-lived process (the desktop app, `cairn mcp`) reads and writes the new database
    /// without a restart. One `stat` per call. A write that began before the swap is refused at
    /// its commit ([`Error::Rebuilt`]), never written into the file moved aside.
    pub(crate) fn store(&self) -> MutexGuard<'_, Store> {
        // A panic while holding the lock leaves SQLite consistent (transactions roll back).
        let mut store = self
            .store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if store.moved() {
            match store.reopened() {
                Ok(fresh) => *store = fresh,
                // Kept: reads show the old archive, and its commits are refused, until a later
                // call opens the new one.
                Err(e) => tracing::warn!("opening the rebuilt archive: {e}"),
            }
        }
        store
    }

    /// A connection of its own for a long write (a sync, the watcher's capture), so the
    /// shared one stays free for reads meanwhile: WAL lets readers see the last committed
    /// batch while the writer works. Concurrent writers queue on the capture lock.
    pub(crate) fn writer(&self) -> Result<Store> {
        let store = Store::open(&self.data_dir.join(DB_FILE))?;
        // The writer reads only the B-tree pages its inserts walk, which its page cache holds;
        // a memory map of the whole file made a 1 GB sync's resident size grow with the
        // database (up to the 256 MB window) for no speed.
        store.unmapped()?;
        Ok(store)
    }

    pub(crate) fn writable(&self) -> Result<()> {
        if let Some((file, why)) = &self.no_room {
            return Err(Error::DiskFull {
                dir: self.data_dir.clone(),
                file: file.clone(),
                why: *why,
            });
        }
        if self.read_only {
            return Err(Error::ReadOnly {
                dir: self.data_dir.clone(),
            });
        }
        Ok(())
    }

    /// Bound the memory the shared connection keeps for reads: at most `mmap_bytes` of the
    /// archive mapped (0: none, every page is read into the page cache instead) and a page
    /// cache of at most `cache_kib` KiB.
    ///
    /// For a long-lived front door that reads a little at a time (the desktop window): every
    /// mapped page it ever touched counts in its resident size for as long as it runs, while
    /// the operating system's file cache keeps those pages at hand anyway. The CLI keeps the
    /// defaults (a 256 MB map, a 32 MB cache), which suit one big read and exit.
    pub fn limit_read_memory(&self, mmap_bytes: u64, cache_kib: u32) -> Result<()> {
        self.store().limit_read_memory(mmap_bytes, cache_kib)
    }

    /// True when nothing has been captured yet (the desktop's first-run page).
    pub fn is_empty(&self) -> Result<bool> {
        let store = self.store();
        crate::archive::store::is_empty(store.conn()).map_err(|e| store.err(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pragma(cairn: &Cairn, name: &str) -> i64 {
        cairn
            .store()
            .conn()
            .query_row(&format!("PRAGMA {name}"), [], |r| r.get(0))
            .unwrap()
    }

    /// The desktop's bounded reader: no map, a small page cache, and reads still answer, on a
    /// writable archive and on one only readable (a `query_only` connection).
    #[test]
    fn read_memory_can_be_bounded_on_writable_and_read_only_archives() {
        let dir = tempfile::tempdir().unwrap();
        let cairn = Cairn::open(dir.path()).unwrap();
        assert_eq!(pragma(&cairn, "mmap_size"), 268_435_456);
        cairn.limit_read_memory(0, 2048).unwrap();
        assert_eq!(pragma(&cairn, "mmap_size"), 0);
        assert_eq!(pragma(&cairn, "cache_size"), -2048);
        assert!(cairn.is_empty().unwrap());
        drop(cairn);

        let read_only = Cairn {
            store: Mutex::new(Store::open_read_only(&dir.path().join(DB_FILE)).unwrap()),
            read_only: true,
            ..Cairn::open(dir.path()).unwrap()
        };
        read_only.limit_read_memory(1 << 20, 1024).unwrap();
        assert_eq!(pragma(&read_only, "mmap_size"), 1 << 20);
        assert_eq!(pragma(&read_only, "cache_size"), -1024);
        assert!(read_only.is_empty().unwrap());
    }
}
