//! The Skills extension (SEP-2640, `io.modelcontextprotocol/skills`) served natively, for
//! clients that know it: `skills/list` and `skills/get` give each local skill's frontmatter and
//! its manifest (every file's `skill://NAME/PATH` URI, `sha256:` digest and size), and
//! `resources/read` of such a URI gives the file. A source's skill is served beside them under
//! `skill://SOURCE.mcp/…` with the digests its source listed, and read through the source,
//! verified, when asked for. Clients that do not know the extension use search and
//! `describe("skill:NAME")` instead; both read the same skills.

use data_encoding::BASE64;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use rmcp::ErrorData;
use rmcp::model::{
    GetSkillResult, ListResourcesResult, ListSkillsResult, ReadResourceResult, Resource,
    ResourceContents, SKILL_MD, Skill as SkillEntry, SkillFrontmatter, SkillResource,
    SkillResources,
};

use crate::skills::upstream::AUTHORITY_SUFFIX;
use crate::skills::{Skill, Skills};
use crate::sources::Sources;

/// How long a client may keep a listing: the skills are read again at most once a second.
const TTL_MS: u64 = 1_000;

/// Path characters kept as they are in a `skill://` URI (RFC 3986 unreserved).
const KEPT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

const SCHEME: &str = "skill://";

/// The URI of `path` (`SKILL.md` or a supporting file) of the skill `name`.
fn uri(name: &str, path: &str) -> String {
    let encoded: Vec<String> = path
        .split('/')
        .map(|segment| utf8_percent_encode(segment, KEPT).to_string())
        .collect();
    format!("{SCHEME}{name}/{}", encoded.join("/"))
}

/// `skills/list`: every skill that can be read whole now.
pub fn list(skills: &Skills) -> ListSkillsResult {
    let entries = skills
        .skills
        .iter()
        .filter_map(|skill| match entry(skill) {
            Ok(entry) => Some(entry),
            Err(e) => {
                tracing::warn!("skill `{}` is not listed: {e}", skill.name);
                None
            }
        })
        .collect();
    let mut result = ListSkillsResult::with_all_items(entries);
    result.ttl_ms = Some(TTL_MS);
    result
}

/// `resources/list`: each skill's `SKILL.md`, named and described as its frontmatter says.
pub fn resources(skills: &Skills) -> ListResourcesResult {
    let mut result = ListResourcesResult::with_all_items(
        skills
            .skills
            .iter()
            .map(|skill| {
                let (uri, name) = match &skill.upstream {
                    Some(upstream) => (upstream.served_skill_md(), upstream.name().to_string()),
                    None => (uri(&skill.name, SKILL_MD), skill.name.clone()),
                };
                Resource::new(uri, name)
                    .with_description(skill.description.clone())
                    .with_mime_type("text/markdown")
            })
            .collect(),
    );
    result.ttl_ms = Some(TTL_MS);
    result
}

/// `skills/get` of a `SKILL.md` URI; one the hub does not serve is invalid params, as the
/// extension says.
pub fn get(skills: &Skills, wanted: &str) -> Result<GetSkillResult, ErrorData> {
    let (skill, path) =
        locate(skills, wanted).map_err(|e| ErrorData::invalid_params(e.message, None))?;
    if path != SKILL_MD {
        return Err(ErrorData::invalid_params(
            format!("`{wanted}` is not a skill's SKILL.md; skills/get takes skill://NAME/SKILL.md"),
            None,
        ));
    }
    let entry = entry(skill).map_err(|e| ErrorData::internal_error(e, None))?;
    Ok(GetSkillResult::new(entry).with_ttl_ms(TTL_MS))
}

/// `resources/read` of a skill's file; a source's is read through `sources` and verified.
pub async fn read(
    skills: &Skills,
    sources: &Sources,
    wanted: &str,
) -> Result<ReadResourceResult, ErrorData> {
    let (skill, path) = locate(skills, wanted)?;
    let bytes = match &skill.upstream {
        Some(upstream) => upstream
            .fetch(sources, &path)
            .await
            .map_err(|e| ErrorData::internal_error(e, None))?,
        None => std::fs::read(skill.dir.join(&path))
            .map_err(|e| ErrorData::internal_error(format!("cannot read `{wanted}`: {e}"), None))?,
    };
    let contents = match String::from_utf8(bytes) {
        Ok(text) => {
            let mime = if path == SKILL_MD {
                "text/markdown"
            } else {
                "text/plain"
            };
            ResourceContents::text(text, wanted).with_mime_type(mime)
        }
        Err(e) => ResourceContents::blob(BASE64.encode(&e.into_bytes()), wanted)
            .with_mime_type("application/octet-stream"),
    };
    Ok(ReadResourceResult::new(vec![contents]))
}

/// The skill and the file (`SKILL.md` or a listed supporting file) a `skill://` URI names.
fn locate<'a>(skills: &'a Skills, wanted: &str) -> Result<(&'a Skill, String), ErrorData> {
    let not_found = || {
        ErrorData::resource_not_found(
            format!(
                "there is no skill file `{}`; skills/list gives every skill's files",
                crate::error_text::echo(wanted)
            ),
            None,
        )
    };
    let rest = wanted.strip_prefix(SCHEME).ok_or_else(not_found)?;
    let (name, path) = rest.split_once('/').ok_or_else(not_found)?;
    if name.ends_with(AUTHORITY_SUFFIX) {
        // A source's skill: only the files its listing names, as the hub serves them.
        return skills
            .skills
            .iter()
            .filter_map(|skill| skill.upstream.as_deref().map(|u| (skill, u)))
            .find_map(|(skill, upstream)| {
                upstream
                    .files
                    .iter()
                    .find(|f| upstream.served_uri(f) == wanted)
                    .map(|f| (skill, f.path.clone()))
            })
            .ok_or_else(not_found);
    }
    let skill = skills.get(name).ok_or_else(not_found)?;
    let path = percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| not_found())?
        .into_owned();
    // Only the files the manifest lists are read: `..` or a hidden file is never among them.
    if path == SKILL_MD || skill.files.contains(&path) {
        Ok((skill, path))
    } else {
        Err(not_found())
    }
}

/// The skill's entry: frontmatter and a manifest with each file's digest and size. A source's
/// skill keeps the frontmatter and digests its source listed, under the hub's URIs.
fn entry(skill: &Skill) -> Result<SkillEntry, String> {
    if let Some(upstream) = &skill.upstream {
        let frontmatter: SkillFrontmatter = serde_json::from_value(upstream.frontmatter.clone())
            .map_err(|e| format!("its listed frontmatter cannot be read: {e}"))?;
        let files = upstream
            .files
            .iter()
            .map(|f| SkillResource::new(upstream.served_uri(f), &f.digest, f.size))
            .collect();
        return Ok(SkillEntry::new(
            upstream.served_skill_md(),
            frontmatter,
            SkillResources::Files(files),
        ));
    }
    let mut files = Vec::with_capacity(skill.files.len() + 1);
    for path in std::iter::once(SKILL_MD).chain(skill.files.iter().map(String::as_str)) {
        let bytes =
            std::fs::read(skill.dir.join(path)).map_err(|e| format!("cannot read {path}: {e}"))?;
        files.push(SkillResource::from_bytes(uri(&skill.name, path), &bytes));
    }
    Ok(SkillEntry::new(
        uri(&skill.name, SKILL_MD),
        SkillFrontmatter::new(skill.name.clone(), skill.description.clone()),
        SkillResources::Files(files),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_path_with_spaces_is_encoded_and_read_back() {
        let sources = Sources::lazy(
            Vec::new(),
            std::sync::Arc::new(crate::credentials::NoSecretStore),
            crate::config::Pacing::default(),
        );
        assert_eq!(uri("pdf", "docs/a b.md"), "skill://pdf/docs/a%20b.md");
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("docs")).expect("dir");
        std::fs::write(dir.path().join("docs/a b.md"), "hello").expect("write");
        std::fs::write(
            dir.path().join(SKILL_MD),
            "---\nname: pdf\ndescription: d\n---\n",
        )
        .expect("write");
        let skills = Skills {
            skills: vec![Skill {
                name: "pdf".into(),
                description: "d".into(),
                body: String::new(),
                dir: dir.path().to_path_buf(),
                files: vec!["docs/a b.md".into()],
                upstream: None,
            }],
            problems: Vec::new(),
        };
        let read = read(&skills, &sources, "skill://pdf/docs/a%20b.md")
            .await
            .expect("read");
        assert_eq!(
            serde_json::to_value(&read.contents[0]).expect("json")["text"],
            "hello"
        );
        assert!(
            super::read(&skills, &sources, "skill://pdf/../secret")
                .await
                .is_err()
        );
        let listed = list(&skills);
        let entry = serde_json::to_value(&listed.skills[0]).expect("json");
        assert_eq!(entry["uri"], "skill://pdf/SKILL.md", "{entry}");
        assert!(
            entry["resources"][1]["digest"]
                .as_str()
                .is_some_and(|d| d.starts_with("sha256:")),
            "{entry}"
        );
    }
}
