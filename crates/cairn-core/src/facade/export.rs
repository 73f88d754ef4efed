//! The [`Cairn`] facade's session export: one session, or a range of its turns, rendered for
//! sharing ([`crate::views::export`]).

use std::path::{Path, PathBuf};

use crate::Cairn;
use crate::error::Result;
use crate::views::export::{Document, ExportOptions, SessionExport};

impl Cairn {
    /// Session `key_or_id` exported as `options` say; every string cleaned for leaving the
    /// machine (secrets redacted, the home directory as `~`).
    pub fn export_session(
        &self,
        key_or_id: &str,
        options: &ExportOptions,
    ) -> Result<SessionExport> {
        let store = self.store();
        let row = self.session_row(&store, key_or_id)?;
        let home = dirs::home_dir().map(|h| h.to_string_lossy().into_owned());
        let doc = Document::build(store.conn(), row, options, home.as_deref(), |e| {
            store.err(e)
        })?;
        Ok(SessionExport {
            format: options.format,
            file_name: doc.file_name(options.format),
            text: doc.render(options.format)?,
            left_out: doc.left_out,
        })
    }

    /// Export into `dir` (created if needed) under the export's own name, or `file_name`. Never
    /// replaces a file (`name (2).html` instead), from either door. Returns the file written.
    pub fn export_session_into(
        &self,
        key_or_id: &str,
        options: &ExportOptions,
        dir: &Path,
        file_name: Option<&str>,
    ) -> Result<(PathBuf, SessionExport)> {
        let export = self.export_session(key_or_id, options)?;
        let name = file_name.unwrap_or(&export.file_name);
        let path = crate::insights::render::write_new(dir, name, export.text.as_bytes())?;
        Ok((path, export))
    }
}
