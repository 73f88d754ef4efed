//! The [`crate::Cairn`] facade, one file per room: each method checks what the door may do
//! (a writable archive, a known session), takes the connection and calls into its room.

mod archive;
mod doctor;
mod export;
mod extract;
pub(crate) mod forget;
mod git;
mod hooks;
pub(crate) mod import;
mod insights;
pub(crate) mod mcp;
pub(crate) mod memory;
mod open;
pub(crate) mod rebuild;
mod recall;
pub(crate) mod reindex;
mod semantic;
#[cfg(feature = "team")]
mod team;
mod views;

/// The home directory, under which the agents keep the settings, configs and skills the
/// facade edits; [`crate::Error::NoHome`] (with its hint) when neither `$HOME` nor the
/// platform knows it.
fn home() -> crate::Result<std::path::PathBuf> {
    dirs::home_dir().ok_or(crate::Error::NoHome)
}
