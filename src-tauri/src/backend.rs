//! What the window holds on to: the opened archive (or why it could not be opened), the
//! `cairn://` link the app was started with, and the live watcher.
//!
//! The archive sits behind a lock only so Settings can reopen it after changing the source dirs
//! (the core reads `config.toml` when it opens). Every command clones the `Arc` and releases the
//! lock before doing any work.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError, RwLock};

use cairn_core::{Cairn, ErrorKind, ErrorReport};

use crate::links::Launch;
use crate::watcher::Watch;

pub struct Backend {
    data_dir: Option<PathBuf>,
    cairn: RwLock<Result<Arc<Cairn>, ErrorReport>>,
    /// The `cairn://…` link to open first, or why the one given was refused: from the command
    /// line the process was started with, or the last one a second launch handed over (a window
    /// still starting has not heard the event).
    launch: Mutex<Launch>,
    /// One sync at a time from this window (the core's capture lock also guards other processes).
    pub(crate) sync_running: AtomicBool,
    /// The source-dir watcher; `None` until the window is ready, or when nothing can be watched.
    watch: Mutex<Option<Watch>>,
    /// Where report exports go instead of the Downloads folder (tests).
    export_dir: Option<PathBuf>,
    /// The bundle's resource dir (the built-in embedding model lives under `models/`).
    resource_dir: OnceLock<PathBuf>,
    /// The recall extraction scheduler; set when the window is ready and extraction is enabled,
    /// replaced when Settings saves a new setup.
    pub(crate) extract: Mutex<Option<crate::extract::Daemon>>,
    /// The background build of the turns' vectors (search by meaning).
    pub(crate) meaning: Arc<crate::meaning::Builds>,
}

impl Backend {
    /// Open the archive in `CAIRN_DATA_DIR`, else the platform data dir.
    pub fn from_env(launch: Launch) -> Backend {
        match Cairn::default_data_dir() {
            Some(dir) => Backend::open(dir).with_launch(launch),
            None => Backend {
                data_dir: None,
                cairn: RwLock::new(Err(ErrorReport::new(
                    ErrorKind::Config,
                    "no data directory",
                )
                .with_hint("set CAIRN_DATA_DIR to the folder Cairn should use"))),
                launch: Mutex::new(launch),
                sync_running: AtomicBool::new(false),
                watch: Mutex::new(None),
                export_dir: None,
                resource_dir: OnceLock::new(),
                extract: Mutex::new(None),
                meaning: Arc::default(),
            },
        }
    }

    /// Open (creating if needed) the archive in `data_dir`.
    pub fn open(data_dir: PathBuf) -> Backend {
        let cairn = open(&data_dir);
        Backend {
            data_dir: Some(data_dir),
            cairn: RwLock::new(cairn),
            launch: Mutex::new(Launch::Nothing),
            sync_running: AtomicBool::new(false),
            watch: Mutex::new(None),
            export_dir: None,
            resource_dir: OnceLock::new(),
            extract: Mutex::new(None),
            meaning: Arc::default(),
        }
    }

    /// Tell the archive (now and after every reopen) where the bundle's resources are, so
    /// semantic search finds the built-in model.
    pub fn set_resource_dir(&self, dir: PathBuf) {
        if let Ok(cairn) = self.cairn() {
            cairn.set_resource_dir(&dir);
        }
        let _ = self.resource_dir.set(dir);
    }

    pub fn with_launch(self, launch: Launch) -> Backend {
        self.set_launch(launch);
        self
    }

    /// What the latest command line said about a link; one that tried none changes nothing.
    pub fn set_launch(&self, launch: Launch) {
        if launch != Launch::Nothing {
            *self.launch.lock().unwrap_or_else(PoisonError::into_inner) = launch;
        }
    }

    /// Write report exports into `dir` instead of the Downloads folder.
    pub fn with_export_dir(mut self, dir: PathBuf) -> Backend {
        self.export_dir = Some(dir);
        self
    }

    pub fn export_dir(&self) -> Option<&PathBuf> {
        self.export_dir.as_ref()
    }

    pub fn data_dir(&self) -> Option<&PathBuf> {
        self.data_dir.as_ref()
    }

    pub fn launch(&self) -> Launch {
        self.launch
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The archive, or the one-line reason it could not be opened.
    pub fn cairn(&self) -> Result<Arc<Cairn>, ErrorReport> {
        self.cairn
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Open the archive again (after `config.toml` changed).
    pub fn reopen(&self) -> Result<Arc<Cairn>, ErrorReport> {
        let Some(dir) = &self.data_dir else {
            return self.cairn();
        };
        let fresh = open(dir);
        if let (Ok(cairn), Some(resources)) = (&fresh, self.resource_dir.get()) {
            cairn.set_resource_dir(resources);
        }
        *self.cairn.write().unwrap_or_else(PoisonError::into_inner) = fresh.clone();
        fresh
    }

    /// Open the archive again when the one open is read-only (the person has made its folder
    /// writable): the fresh one takes its place only when it can be written, so a folder still
    /// read-only keeps the archive being read. The archive open now.
    pub fn reopen_writable(&self) -> Result<Arc<Cairn>, ErrorReport> {
        let current = self.cairn()?;
        let Some(dir) = &self.data_dir else {
            return Ok(current);
        };
        if !current.is_read_only() {
            return Ok(current);
        }
        match open(dir) {
            Ok(fresh) if !fresh.is_read_only() => {
                if let Some(resources) = self.resource_dir.get() {
                    fresh.set_resource_dir(resources);
                }
                *self.cairn.write().unwrap_or_else(PoisonError::into_inner) = Ok(fresh.clone());
                Ok(fresh)
            }
            _ => Ok(current),
        }
    }

    pub(crate) fn watch(&self) -> MutexGuard<'_, Option<Watch>> {
        self.watch.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Claim the right to sync; `false` when a sync is already running.
    pub(crate) fn begin_sync(&self) -> bool {
        self.sync_running
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    pub(crate) fn end_sync(&self) {
        self.sync_running.store(false, Ordering::Release);
    }

    /// A sync or live capture finished: tell the extraction scheduler, if one runs.
    pub(crate) fn sync_completed(&self) {
        if let Some(daemon) = self.extract_daemon().as_ref() {
            daemon.sync_completed();
        }
    }

    pub(crate) fn meaning_builds(&self) -> Arc<crate::meaning::Builds> {
        Arc::clone(&self.meaning)
    }

    pub(crate) fn extract_daemon(&self) -> MutexGuard<'_, Option<crate::extract::Daemon>> {
        self.extract.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The window's reads: no memory map and an 8 MiB page cache (the core's defaults are a 256 MB
/// map and a 32 MB cache, sized for the CLI's one-shot reads). A window stays open for days;
/// every mapped page a view ever touched stayed in its resident size (38 MB of a 2,000-session
/// archive 30 s after start), while the file cache keeps the pages at hand for re-reads anyway.
const READ_MMAP_BYTES: u64 = 0;
const READ_CACHE_KIB: u32 = 8 * 1024;

fn open(dir: &std::path::Path) -> Result<Arc<Cairn>, ErrorReport> {
    let said = |e: cairn_core::Error| crate::report::report(&e);
    let cairn = Cairn::open(dir).map_err(said)?;
    cairn
        .limit_read_memory(READ_MMAP_BYTES, READ_CACHE_KIB)
        .map_err(said)?;
    Ok(Arc::new(cairn))
}
