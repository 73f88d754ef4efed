//! Report templates: what a report asks of the model and which material it reads.
//!
//! A template is a Markdown file with TOML front matter between `+++` lines:
//!
//! ```text
//! +++
//! id = "weekly-summary"
//! version = "1"
//! title = "Weekly summary"
//! description = "One line for the template picker."
//! material = ["turns", "branches"]
//! +++
//! The instructions for the model, in Markdown.
//! ```
//!
//! Five are built in. Users add their own as `<data dir>/insights/templates/*.md`; a user
//! template with a built-in's id replaces it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The material a template can ask for, beyond the session headers and aggregates every
/// report gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Material {
    /// Each turn's prompt and the agent's last answer, as excerpts.
    Turns,
    /// Failed tool calls: the call and the start of its output.
    Failures,
    /// Branches, reviews and commits each session is linked to, and why.
    Branches,
    /// Recall entries whose evidence is in these sessions.
    Recall,
    /// Questions asked of Recall in the slice that found nothing.
    RecallMisses,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Template {
    pub id: String,
    pub version: String,
    pub title: String,
    pub description: String,
    pub material: Vec<Material>,
    /// The instructions (the Markdown after the front matter).
    #[serde(default)]
    pub instructions: String,
    /// `builtin`, or the file it was read from.
    #[serde(default)]
    pub source: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FrontMatter {
    id: String,
    version: String,
    title: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    material: Vec<Material>,
}

const BUILTIN: [&str; 5] = [
    include_str!("templates/branch-retrospective.md"),
    include_str!("templates/weekly-summary.md"),
    include_str!("templates/decisions-log.md"),
    include_str!("templates/failure-patterns.md"),
    include_str!("templates/recall-gaps.md"),
];

/// Where users put their own templates.
pub fn user_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("insights").join("templates")
}

/// Parse one template file's text; `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<Template> {
    let err = |message: String| Error::Config {
        path: PathBuf::from(origin),
        message,
    };
    let rest = text
        .trim_start_matches('\u{feff}')
        .strip_prefix("+++")
        .ok_or_else(|| {
            err("a template starts with TOML front matter between `+++` lines (id, version, title, material)".to_owned())
        })?;
    let (front, body) = rest
        .split_once("\n+++")
        .ok_or_else(|| err("the front matter has no closing `+++` line".to_owned()))?;
    let fm: FrontMatter = toml::from_str(front)
        .map_err(|e| err(e.to_string().replace('\n', " ").trim().to_owned()))?;
    let valid_id = !fm.id.is_empty()
        && fm
            .id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !valid_id {
        return Err(err(format!(
            "template id `{}`: use lowercase letters, digits and `-`",
            fm.id
        )));
    }
    let instructions = body.strip_prefix('\n').unwrap_or(body).trim().to_owned();
    if instructions.is_empty() {
        return Err(err(
            "the template has no instructions after its front matter".to_owned(),
        ));
    }
    let mut material = fm.material;
    material.sort();
    material.dedup();
    Ok(Template {
        id: fm.id,
        version: fm.version,
        title: fm.title,
        description: fm.description,
        material,
        instructions,
        source: origin.to_owned(),
    })
}

/// The built-in templates, then the user's (replacing built-ins with the same id), by id.
/// A user template that does not parse is an error naming its file.
pub fn all(data_dir: &Path) -> Result<Vec<Template>> {
    let mut out: Vec<Template> = Vec::new();
    for text in BUILTIN {
        out.push(parse(text, "builtin")?);
    }
    let dir = user_dir(data_dir);
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(sorted(out)),
        Err(e) => {
            return Err(Error::Read {
                path: dir,
                source: e,
            });
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).map_err(|e| Error::Read {
            path: path.clone(),
            source: e,
        })?;
        let t = parse(&text, &path.display().to_string())?;
        out.retain(|b| b.id != t.id);
        out.push(t);
    }
    Ok(sorted(out))
}

fn sorted(mut v: Vec<Template>) -> Vec<Template> {
    v.sort_by(|a, b| a.id.cmp(&b.id));
    v
}

/// One template by id.
pub fn find(data_dir: &Path, id: &str) -> Result<Template> {
    let all = all(data_dir)?;
    let ids: Vec<&str> = all.iter().map(|t| t.id.as_str()).collect();
    let known = ids.join(", ");
    all.iter()
        .find(|t| t.id == id)
        .cloned()
        .ok_or_else(|| Error::NotFound(format!("template `{id}` (known: {known})")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse_and_cover_the_required_reports() {
        let dir = tempfile::tempdir().unwrap();
        let ids: Vec<String> = all(dir.path()).unwrap().into_iter().map(|t| t.id).collect();
        assert_eq!(
            ids,
            [
                "branch-retrospective",
                "decisions-log",
                "failure-patterns",
                "recall-gaps",
                "weekly-summary"
            ]
        );
        let gaps = find(dir.path(), "recall-gaps").unwrap();
        assert!(gaps.material.contains(&Material::RecallMisses));
        assert!(
            find(dir.path(), "nope")
                .unwrap_err()
                .to_string()
                .contains("weekly-summary")
        );
    }

    #[test]
    fn user_templates_add_and_replace() {
        let dir = tempfile::tempdir().unwrap();
        let udir = user_dir(dir.path());
        std::fs::create_dir_all(&udir).unwrap();
        std::fs::write(
            udir.join("mine.md"),
            "+++\nid = \"test-debt\"\nversion = \"3\"\ntitle = \"Test debt\"\nmaterial = [\"failures\"]\n+++\nList the tests skipped.\n",
        )
        .unwrap();
        std::fs::write(
            udir.join("weekly.md"),
            "+++\nid = \"weekly-summary\"\nversion = \"9\"\ntitle = \"My week\"\n+++\nShort.\n",
        )
        .unwrap();
        let all = all(dir.path()).unwrap();
        assert_eq!(all.len(), 6);
        let mine = all.iter().find(|t| t.id == "test-debt").unwrap();
        assert_eq!(mine.instructions, "List the tests skipped.");
        assert!(mine.source.ends_with("mine.md"));
        let weekly = all.iter().find(|t| t.id == "weekly-summary").unwrap();
        assert_eq!(
            (weekly.version.as_str(), weekly.title.as_str()),
            ("9", "My week")
        );
    }

    #[test]
    fn broken_templates_name_the_file_and_the_fix() {
        let e = parse("no front matter", "/t/a.md").unwrap_err().to_string();
        assert!(e.contains("/t/a.md") && e.contains("+++"), "{e}");
        let e = parse("+++\nid = \"x\"\n", "/t/b.md")
            .unwrap_err()
            .to_string();
        assert!(e.contains("closing"), "{e}");
        let e = parse("+++\nid = \"x\"\nversion = \"1\"\n+++\nbody", "/t/c.md")
            .unwrap_err()
            .to_string();
        assert!(e.contains("title"), "{e}");
        let e = parse(
            "+++\nid = \"X Y\"\nversion = \"1\"\ntitle = \"t\"\n+++\nbody",
            "/t/d.md",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("lowercase"), "{e}");
        let e = parse(
            "+++\nid = \"x\"\nversion = \"1\"\ntitle = \"t\"\nmaterial = [\"gossip\"]\n+++\nbody",
            "/t/e.md",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("gossip"), "{e}");
        let e = parse(
            "+++\nid = \"x\"\nversion = \"1\"\ntitle = \"t\"\n+++\n  \n",
            "/t/f.md",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("no instructions"), "{e}");
    }
}
