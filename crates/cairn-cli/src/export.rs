//! `cairn export` and `cairn import`: one session out as md, html, json or atif, and an ATIF
//! trajectory in. Flags only; the core cleans, renders and names.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use cairn_core::Cairn;
use cairn_core::views::export::{ExportOptions, SessionExportFormat, TurnRange};

use crate::render::{self, clean};
use cairn_core::text::plural;

#[derive(clap::Args)]
pub struct ExportArgs {
    /// A session key (`sha256-…`) or the agent's own session id.
    session: String,
    /// md, html (one self-contained page), json (Cairn's view types) or atif (an ATIF
    /// trajectory other tools read). Default: what the -o file's name ends with (`.html`,
    /// `.json`, `.atif.json` or `.atif`, `.md`), else md.
    #[arg(long, value_parser = session_format)]
    format: Option<String>,
    /// Only these turns: `3..7` (3 to 7), `3..`, `..7` or `5`.
    #[arg(long, value_parser = turn_range)]
    turns: Option<String>,
    /// Cut each tool output after this many bytes (default 4096; the archive keeps up to
    /// 16384 of each).
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u32).range(1..))]
    max_output: Option<u32>,
    /// The file to write (default, and `-o -`: stdout; `-o .` picks a name in the current
    /// directory). An existing file is never replaced: the export goes beside it as
    /// `name (2).html`.
    #[arg(long, short)]
    output: Option<PathBuf>,
}

/// Where `-o` writes: `None` for stdout (no `-o`, or `-o -`), else the folder and the file
/// name asked for (`None` for a folder: the export picks one). A device, a FIFO or a socket is
/// no file to write beside (`-o /dev/null` made `/dev/null (2)`), and a name with a control
/// character would be shown as another name: both are refused.
pub(crate) fn output_place(output: Option<PathBuf>) -> Result<Option<(PathBuf, Option<String>)>> {
    let Some(target) = output.filter(|o| o.as_os_str() != "-") else {
        return Ok(None);
    };
    if std::fs::metadata(&target).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        bail!(
            "{} is not a regular file or a folder; name a file to write, or leave out -o for stdout",
            clean(&target.display().to_string())
        );
    }
    if target.to_string_lossy().chars().any(char::is_control) {
        bail!(
            "the file name {} holds a control character; pick another name",
            clean(&target.display().to_string())
        );
    }
    let (dir, name) = match target.file_name() {
        Some(name) if !target.is_dir() => (
            target
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."))
                .to_owned(),
            Some(name.to_string_lossy().into_owned()),
        ),
        _ => (target, None),
    };
    // A folder that is not there is a typo more often than a wish: made, it hides where the
    // export went.
    if !dir.is_dir() {
        bail!(
            "there is no folder {} to write in; create it first, or name another",
            clean(&dir.display().to_string())
        );
    }
    Ok(Some((dir, name)))
}

/// clap's check of `--format` (a usage error, exit 2, for a format there is not).
fn session_format(typed: &str) -> Result<String, String> {
    SessionExportFormat::parse(typed)
        .map(|f| f.name().to_owned())
        .map_err(|e| e.to_string())
}

/// clap's check of `--turns`.
fn turn_range(typed: &str) -> Result<String, String> {
    TurnRange::parse(typed)
        .map(|_| typed.to_owned())
        .map_err(|e| e.to_string())
}

/// The format of an export printed on stdout under `--json`, which promises one JSON document
/// there: JSON unless a format was asked for (`json`, `atif`: the document itself); Markdown or
/// HTML asked for is a usage error that says how to get either.
pub(crate) fn for_json_stdout(
    asked: Option<&str>,
    json_out: bool,
    to_file: bool,
) -> Result<Option<String>> {
    match asked {
        _ if !json_out || to_file => Ok(asked.map(str::to_owned)),
        None => Ok(Some("json".to_owned())),
        Some(f @ ("json" | "atif")) => Ok(Some(f.to_owned())),
        Some(f) => Err(crate::Usage(format!(
            "--json prints one JSON document, which --format {f} is not: leave out --json to print {f}, or write it to a file with --output"
        ))
        .into()),
    }
}

/// The format to write, by its name (`md`, `html`, `json`, `atif`): the one asked for, else the
/// one the file's name ends with, else md. A name whose ending asks for another format is
/// refused (`-o x.html` once wrote Markdown). Session and report exports both choose so.
pub(crate) fn format_for(asked: Option<&str>, name: Option<&str>) -> Result<String> {
    let named = name.and_then(SessionExportFormat::for_file);
    let format = match asked {
        Some(asked) => SessionExportFormat::parse(asked)?,
        None => named.unwrap_or(SessionExportFormat::Md),
    };
    if let Some(name) = name.filter(|n| !format.fits(n)) {
        bail!(
            "{} names a .{} file but the export is {}: leave out --format to write what the name says, or end the name with .{}",
            clean(name),
            named.map_or("other", SessionExportFormat::extension),
            format.extension(),
            format.extension()
        );
    }
    Ok(format.name().to_owned())
}

pub fn export(args: ExportArgs, cairn: &Cairn, json_out: bool, out: &mut impl Write) -> Result<()> {
    let place = output_place(args.output)?;
    let asked = for_json_stdout(args.format.as_deref(), json_out, place.is_some())?;
    let options = ExportOptions {
        format: SessionExportFormat::parse(&format_for(
            asked.as_deref(),
            place.as_ref().and_then(|(_, name)| name.as_deref()),
        )?)?,
        turns: args.turns.as_deref().map(TurnRange::parse).transpose()?,
        max_output_bytes: args.max_output.unwrap_or(0),
    };
    let Some((dir, name)) = place else {
        // stdout is the document itself (CLI.md): under --json, a JSON one.
        let export = cairn.export_session(&args.session, &options)?;
        out.write_all(export.text.as_bytes())?;
        if !export.left_out.redactions.is_empty() || export.left_out.outputs_cut > 0 {
            say_err!("cairn: {}", clean(&export.left_out.sentence()));
        }
        return Ok(());
    };
    let (path, export) =
        cairn.export_session_into(&args.session, &options, &dir, name.as_deref())?;
    if json_out {
        render::json(
            out,
            &serde_json::json!({"path": path, "format": export.format, "left_out": export.left_out}),
        )?;
    } else {
        writeln!(out, "Wrote {}", clean(&path.display().to_string()))?;
        writeln!(out, "{}", clean(&export.left_out.sentence()))?;
    }
    Ok(())
}

#[derive(clap::Args)]
pub struct ImportArgs {
    /// An ATIF trajectory (`*.atif.json`, as `cairn export --format atif` writes).
    file: PathBuf,
}

pub fn import(args: ImportArgs, cairn: &Cairn, json_out: bool, out: &mut impl Write) -> Result<()> {
    let imported = cairn.import_atif(&args.file)?;
    if json_out {
        return render::json(out, &imported);
    }
    let handle = clean(&cairn.session_handle(&imported.session_key)?);
    if imported.already_imported {
        writeln!(
            out,
            "Already imported: {} ({}); nothing new.",
            clean(&args.file.display().to_string()),
            plural(imported.turns, "turn")
        )?;
    } else {
        writeln!(
            out,
            "Imported {}: {}, {}.",
            clean(&args.file.display().to_string()),
            plural(imported.turns, "turn"),
            plural(imported.records_added + imported.records_updated, "record")
        )?;
    }
    writeln!(out, "Read it with `cairn show {handle}`.")?;
    Ok(())
}
