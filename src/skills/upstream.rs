//! Skills an upstream source publishes under the Skills extension (SEP-2640): the entries of its
//! `skills/list`, kept with the source's tool listing (and cached with it), each addressed as
//! `skill:SOURCE.NAME` beside the local `skill:NAME` (a local skill's name never holds a dot, so
//! the two cannot meet), versioned by the digest of its manifest, and its files fetched on
//! demand (`resources/read`) and verified against the manifest's size and digest before any of
//! it reaches the model. Skills served to a skill-aware client carry the source in their URI:
//! `skill://SOURCE.mcp/…`, again never a local skill's authority.

use std::path::{Path, PathBuf};

use rmcp::model::{SKILL_MD, Skill as Entry, SkillResources};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{PREFIX, Skill, frontmatter};
use crate::config::edit::write_atomically;
use crate::model::tool::json_digest;
use crate::sources::Sources;

/// The most files one skill may have, and their total size: the limits the extension fixes.
const MAX_RESOURCES: usize = 512;
const MAX_TOTAL_BYTES: u64 = 16 * 1024 * 1024;

/// What follows the source's name in the authority of the `skill://` URIs the hub serves for
/// its skills.
pub const AUTHORITY_SUFFIX: &str = ".mcp";

/// One file of an upstream skill's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestFile {
    /// Relative to the skill's folder, `/`-separated, as the URI spells it.
    pub path: String,
    /// The upstream's URI of the file.
    pub uri: String,
    pub digest: String,
    pub size: u64,
}

/// One skill a source publishes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UpstreamSkill {
    pub source: String,
    /// What follows `SOURCE.` in the address: the skill's name, or its whole path in the
    /// source (`acme.billing.refunds`) when two of the source's skills share a name.
    pub key: String,
    /// The upstream's URI of its `SKILL.md`.
    pub uri: String,
    /// The frontmatter as the source listed it, every field kept.
    pub frontmatter: Value,
    /// `SKILL.md` first.
    pub files: Vec<ManifestFile>,
    /// The digest of the entry (URI, frontmatter and every file's URI and digest): a different
    /// one is a changed skill.
    pub version: String,
}

impl UpstreamSkill {
    /// The manifest's entry of `SKILL.md` (listed first; a cache edited by hand may lack it).
    pub fn skill_md_file(&self) -> Option<&ManifestFile> {
        self.files.iter().find(|f| f.path == SKILL_MD)
    }

    /// The URI the hub serves its `SKILL.md` under.
    pub fn served_skill_md(&self) -> String {
        self.skill_md_file().map_or_else(
            || format!("skill://{}{AUTHORITY_SUFFIX}/{SKILL_MD}", self.source),
            |file| self.served_uri(file),
        )
    }

    /// `SOURCE.KEY`, the name in `skill:SOURCE.KEY`.
    pub fn address_name(&self) -> String {
        format!("{}.{}", self.source, self.key)
    }

    pub fn name(&self) -> &str {
        self.frontmatter
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    pub fn description(&self) -> &str {
        self.frontmatter
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    /// As a skill beside the local ones (search, describe, the native listing).
    pub fn to_skill(&self) -> Skill {
        Skill {
            name: self.address_name(),
            description: self.description().to_string(),
            body: String::new(),
            dir: Default::default(),
            files: self
                .files
                .iter()
                .filter(|f| f.path != SKILL_MD)
                .map(|f| f.path.clone())
                .collect(),
            upstream: Some(Box::new(self.clone())),
        }
    }

    /// The URI the hub serves `file` under: the upstream URI without its scheme, under the
    /// authority `SOURCE.mcp`, so the skill path still ends in the skill's name.
    pub fn served_uri(&self, file: &ManifestFile) -> String {
        let rest = file
            .uri
            .split_once("://")
            .map_or(file.uri.as_str(), |(_, rest)| rest);
        format!("skill://{}{AUTHORITY_SUFFIX}/{rest}", self.source)
    }

    /// Fetches `path` (`SKILL.md` or a listed file) from the source and checks it against the
    /// manifest: a file whose size or digest differs is refused, since what the person and the
    /// model were shown is not what the source now serves. What passed, text or binary, is
    /// scrubbed of the source's secrets like anything else it answers (so a file that held one
    /// no longer matches its digest: a client that checks refuses it rather than see the
    /// secret).
    pub async fn fetch(&self, sources: &Sources, path: &str) -> Result<Vec<u8>, String> {
        let Some(file) = self.files.iter().find(|f| f.path == path) else {
            return Err(self.no_such_file(path));
        };
        let bytes = sources
            .read_resource(&self.source, &file.uri)
            .await
            .map_err(|e| format!("cannot read {PREFIX}{}/{path}: {e}", self.address_name()))?;
        let listed = rmcp::model::SkillResource::new(&file.uri, &file.digest, file.size);
        if listed.verify(&bytes).is_err() {
            return Err(format!(
                "{PREFIX}{}/{path} is not what source `{}` listed (its size or digest differs): the skill changed upstream; run `capabilities source refresh {}` and describe it again",
                self.address_name(),
                self.source,
                self.source
            ));
        }
        Ok(sources.scrub(&self.source, bytes).await)
    }

    /// The `SKILL.md` of the skill, fetched and verified, and kept in `texts`.
    pub async fn skill_md(&self, sources: &Sources, texts: &SkillTexts) -> Result<String, String> {
        let bytes = self.fetch(sources, SKILL_MD).await?;
        let text = String::from_utf8(bytes).map_err(|_| {
            format!(
                "{PREFIX}{}: its SKILL.md is not UTF-8 text",
                self.address_name()
            )
        })?;
        if let Some(file) = self.skill_md_file() {
            texts.put(&file.digest, &text);
        }
        Ok(text)
    }

    /// The instructions of the skill: its `SKILL.md` fetched, verified, and its frontmatter
    /// compared with the listed one (a mismatch is refused, as the extension says).
    pub async fn instructions(
        &self,
        sources: &Sources,
        texts: &SkillTexts,
    ) -> Result<String, String> {
        let text = self.skill_md(sources, texts).await?;
        let address = format!("{PREFIX}{}", self.address_name());
        let front = frontmatter::parse(&text, self.name()).map_err(|m| {
            format!(
                "{address}: its SKILL.md from source `{}` is malformed at line {}: {}",
                self.source, m.line, m.message
            )
        })?;
        if front.name != self.name() || front.description != self.description() {
            return Err(format!(
                "{address}: its SKILL.md does not match what source `{}` listed (name or description differ); run `capabilities source refresh {}` and describe it again",
                self.source, self.source
            ));
        }
        Ok(front.body)
    }

    pub(super) fn no_such_file(&self, path: &str) -> String {
        super::describe::no_such_file(&self.to_skill(), path)
    }
}

/// Verified `SKILL.md` texts of sources' skills, one file per digest in a folder of the data
/// directory (beside the tool listings, where only the hub writes), so `source review` can
/// show how a changed skill's text differs from the one confirmed. A text is hashed again
/// when read: one changed on disk is not used.
pub struct SkillTexts {
    dir: PathBuf,
}

impl SkillTexts {
    /// The texts kept beside the tool listings in `catalog_dir`. The folder's name has a
    /// hyphen, so no source's listing (`NAME.json`, NAME an identifier) is ever in its way.
    pub fn beside(catalog_dir: &Path) -> SkillTexts {
        SkillTexts {
            dir: catalog_dir.join("skill-texts"),
        }
    }

    fn path(&self, digest: &str) -> Option<PathBuf> {
        let hex = digest.strip_prefix("sha256:")?;
        hex.bytes()
            .all(|b| b.is_ascii_hexdigit())
            .then(|| self.dir.join(hex))
    }

    /// The text whose digest is `digest`, if kept and still that text.
    pub fn get(&self, digest: &str) -> Option<String> {
        let text = std::fs::read_to_string(self.path(digest)?).ok()?;
        (rmcp::model::sha256_digest(text.as_bytes()) == digest).then_some(text)
    }

    /// Keeps `text`, verified against `digest`; a failure is logged (only a later review's
    /// diff misses it).
    pub fn put(&self, digest: &str, text: &str) {
        let Some(path) = self.path(digest) else {
            return;
        };
        if let Err(e) = write_atomically(&path, text) {
            tracing::warn!("cannot keep a skill's text for later reviews: {e:#}");
        }
    }
}

/// The skills of `source`'s listing that can be loaded, each keyed uniquely within it. An
/// entry the extension says not to load (invalid, `"dynamic"` so never verifiable, or past the
/// limits) is left out with a warning in the log.
pub fn from_listing(source: &str, entries: Vec<Entry>) -> Vec<UpstreamSkill> {
    let mut out: Vec<UpstreamSkill> = entries
        .into_iter()
        .filter_map(|entry| match convert(source, entry) {
            Ok(skill) => Some(skill),
            Err(why) => {
                tracing::warn!("a skill of source `{source}` is left out: {why}");
                None
            }
        })
        .collect();
    // Two skills with one name are both kept, each under its whole path.
    let names: Vec<String> = out.iter().map(|s| s.key.clone()).collect();
    for skill in &mut out {
        if names.iter().filter(|n| **n == skill.key).count() > 1 {
            skill.key = skill_path(&skill.uri).replace('/', ".");
        }
    }
    out.sort_by(|a, b| a.key.cmp(&b.key));
    out.dedup_by(|a, b| a.key == b.key);
    out
}

fn convert(source: &str, entry: Entry) -> Result<UpstreamSkill, String> {
    entry
        .validate()
        .map_err(|e| format!("{}: {e}", entry.uri))?;
    let SkillResources::Files(resources) = &entry.resources else {
        return Err(format!(
            "{}: its files are \"dynamic\", so what it serves cannot be verified",
            entry.uri
        ));
    };
    // Sizes are the upstream's claims: two near u64::MAX must not wrap into a small total.
    let total = resources
        .iter()
        .fold(0u64, |total, r| total.saturating_add(r.size));
    if resources.len() > MAX_RESOURCES || total > MAX_TOTAL_BYTES {
        return Err(format!(
            "{}: {} files of {total} bytes in all, past the extension's limits ({MAX_RESOURCES} files, {MAX_TOTAL_BYTES} bytes)",
            entry.uri,
            resources.len()
        ));
    }
    let root = entry
        .uri
        .strip_suffix(SKILL_MD)
        .unwrap_or(&entry.uri)
        .to_string();
    let mut files: Vec<ManifestFile> = resources
        .iter()
        .map(|r| ManifestFile {
            path: r.uri.strip_prefix(&root).unwrap_or(&r.uri).to_string(),
            uri: r.uri.clone(),
            digest: r.digest.clone(),
            size: r.size,
        })
        .collect();
    files.sort_by(|a, b| (a.path != SKILL_MD, &a.path).cmp(&(b.path != SKILL_MD, &b.path)));
    let frontmatter = serde_json::to_value(&entry.frontmatter).map_err(|e| e.to_string())?;
    let version = json_digest(&json!([
        entry.uri,
        frontmatter,
        files
            .iter()
            .map(|f| json!([f.uri, f.digest]))
            .collect::<Vec<_>>()
    ]));
    Ok(UpstreamSkill {
        source: source.to_string(),
        key: entry.frontmatter.name.clone(),
        uri: entry.uri.clone(),
        frontmatter,
        files,
        version,
    })
}

/// The skill path of a `SKILL.md` URI: `acme/billing/refunds` in
/// `skill://acme/billing/refunds/SKILL.md`.
fn skill_path(uri: &str) -> &str {
    let rest = uri.split_once("://").map_or(uri, |(_, rest)| rest);
    rest.strip_suffix(SKILL_MD)
        .map_or(rest, |r| r.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use rmcp::model::{SkillFrontmatter, SkillResource};

    use super::*;

    fn entry(path: &str, name: &str, files: &[(&str, &[u8])]) -> Entry {
        let uri = format!("skill://{path}/SKILL.md");
        let resources = std::iter::once((SKILL_MD, b"---\n".as_slice()))
            .chain(files.iter().copied())
            .map(|(file, bytes)| SkillResource::from_bytes(format!("skill://{path}/{file}"), bytes))
            .collect();
        Entry::new(
            uri,
            SkillFrontmatter::new(name, "Does a thing."),
            SkillResources::Files(resources),
        )
    }

    #[test]
    fn skills_are_keyed_by_name_and_qualified_by_path_when_names_meet() {
        let skills = from_listing(
            "docs",
            vec![
                entry("acme/billing/refunds", "refunds", &[]),
                entry("acme/support/refunds", "refunds", &[]),
                entry("notes", "notes", &[("templates/a.md", b"a")]),
            ],
        );
        let keys: Vec<&str> = skills.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(
            keys,
            ["acme.billing.refunds", "acme.support.refunds", "notes"]
        );
        let notes = &skills[2];
        assert_eq!(notes.address_name(), "docs.notes");
        assert_eq!(notes.to_skill().files, ["templates/a.md"]);
        assert_eq!(
            notes.served_uri(&notes.files[1]),
            "skill://docs.mcp/notes/templates/a.md"
        );
    }

    #[test]
    fn a_dynamic_or_invalid_skill_is_left_out_and_a_change_is_a_new_version() {
        let dynamic = Entry::new(
            "skill://live/SKILL.md",
            SkillFrontmatter::new("live", "d"),
            SkillResources::Dynamic,
        );
        let misnamed = entry("one", "two", &[]);
        assert!(from_listing("s", vec![dynamic, misnamed]).is_empty());
        let before = &from_listing("s", vec![entry("a", "a", &[("x.md", b"1")])])[0];
        let after = &from_listing("s", vec![entry("a", "a", &[("x.md", b"2")])])[0];
        assert_ne!(before.version, after.version);
    }

    #[test]
    fn sizes_that_would_overflow_when_added_are_past_the_limit_not_a_panic() {
        let mut huge = entry("big", "big", &[("a.md", b"a"), ("b.md", b"b")]);
        let SkillResources::Files(files) = &mut huge.resources else {
            unreachable!("entry() lists files");
        };
        for file in files.iter_mut().skip(1) {
            file.size = 1 << 63;
        }
        let kept = from_listing("s", vec![huge, entry("small", "small", &[])]);
        let keys: Vec<&str> = kept.iter().map(|s| s.key.as_str()).collect();
        assert_eq!(keys, ["small"]);
    }
}
