//! Skills: folders with a `SKILL.md` (the Agent Skills format) and supporting files, gathered
//! from the config directory's `skills/` and the folders `[skills] dirs` names. A malformed
//! `SKILL.md` is reported (file, line, what to fix) and the others still load; beside them the
//! skills upstream sources publish (`upstream`, `skill:SOURCE.NAME`). `describe` renders
//! `skill:NAME` and `skill:NAME/PATH` for the agent; `index` ranks them for search.
//!
//! | file | owns |
//! |---|---|
//! | `frontmatter` | reading one `SKILL.md`, with each mistake's line and fix |
//! | `describe` | `skill:NAME` (the instructions and the files) and `skill:NAME/PATH` within a token budget |
//! | `index` | skills as search documents beside the tools, and the cache that reloads them |
//! | `upstream` | the skills of sources that declare the Skills extension: listing, fetching, verifying |

pub mod describe;
mod frontmatter;
pub mod index;
pub mod upstream;

use std::fmt;
use std::path::{Path, PathBuf};

use crate::config::SkillDirs;

pub use frontmatter::name_problem;

/// The prefix of a skill's address in search and describe.
pub const PREFIX: &str = "skill:";

/// The file that makes a folder a skill.
pub const SKILL_FILE: &str = "SKILL.md";

/// At most this many supporting files are listed per skill: a skill is instructions, not a
/// repository.
const MAX_FILES: usize = 200;

/// One loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    /// The instructions after the frontmatter.
    pub body: String,
    /// The skill's folder.
    pub dir: PathBuf,
    /// Supporting files, relative to `dir` with `/` separators, sorted; hidden ones left out.
    pub files: Vec<String>,
    /// Where an upstream source's skill comes from (its `dir` is empty, its `body` fetched
    /// when described); `None` for a local skill.
    pub upstream: Option<Box<upstream::UpstreamSkill>>,
}

/// A `SKILL.md` that could not be loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    pub line: usize,
    pub message: String,
    pub fix: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Line 0: the problem is the file or folder itself.
        match self.line {
            0 => write!(f, "{}: {}; {}", self.file.display(), self.message, self.fix),
            line => write!(
                f,
                "{}:{line}: {}; {}",
                self.file.display(),
                self.message,
                self.fix
            ),
        }
    }
}

/// Every skill found, in name order, and what could not be loaded.
#[derive(Debug, Clone, Default)]
pub struct Skills {
    pub skills: Vec<Skill>,
    pub problems: Vec<Problem>,
}

impl Skills {
    /// Loads the skills of `dirs`: the config directory's `skills/` (which need not exist),
    /// then each named folder (one missing is a problem). The first of two skills with one
    /// name wins and the other is a problem.
    pub fn load(dirs: &SkillDirs) -> Skills {
        let mut out = Skills::default();
        let every =
            std::iter::once((&dirs.home, false)).chain(dirs.named.iter().map(|d| (d, true)));
        for (dir, named) in every {
            let entries = match std::fs::read_dir(dir) {
                Ok(entries) => entries,
                Err(e) => {
                    if named {
                        out.problems.push(Problem {
                            file: dir.clone(),
                            line: 0,
                            message: format!(
                                "this folder of skills, named in [skills] dirs, cannot be read: {e}"
                            ),
                            fix: "create it, or remove it from [skills] dirs in the config".into(),
                        });
                    }
                    continue;
                }
            };
            let mut folders: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir() && !hidden(p))
                .collect();
            folders.sort();
            for folder in folders {
                if !folder.join(SKILL_FILE).is_file() {
                    continue;
                }
                match load_one(&folder) {
                    Ok(skill) => match out.get(&skill.name) {
                        Some(first) => out.problems.push(Problem {
                            file: folder.join(SKILL_FILE),
                            line: 1,
                            message: format!(
                                "a skill named `{}` is already loaded from {}",
                                skill.name,
                                first.dir.display()
                            ),
                            fix: "rename one of them (its folder and its `name`)".into(),
                        }),
                        None => out.skills.push(skill),
                    },
                    Err(problem) => out.problems.push(problem),
                }
            }
        }
        out.skills.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// These skills with the upstream ones beside them, in name order.
    pub fn with_upstream(&self, upstream: &[upstream::UpstreamSkill]) -> Skills {
        let mut all = self.clone();
        all.skills
            .extend(upstream.iter().map(upstream::UpstreamSkill::to_skill));
        all.skills.sort_by(|a, b| a.name.cmp(&b.name));
        all
    }
}

/// Loads the skill in `folder`, which holds a `SKILL.md`.
pub fn load_one(folder: &Path) -> Result<Skill, Problem> {
    let file = folder.join(SKILL_FILE);
    let problem = |line: usize, message: String, fix: String| Problem {
        file: file.clone(),
        line,
        message,
        fix,
    };
    let text = std::fs::read_to_string(&file).map_err(|e| {
        problem(
            1,
            format!("cannot be read: {e}"),
            "make it a readable UTF-8 text file".into(),
        )
    })?;
    let folder_name = folder
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let front =
        frontmatter::parse(&text, &folder_name).map_err(|m| problem(m.line, m.message, m.fix))?;
    Ok(Skill {
        name: front.name,
        description: front.description,
        body: front.body,
        dir: folder.to_path_buf(),
        files: supporting_files(folder),
        upstream: None,
    })
}

/// The files under `folder` other than `SKILL.md`, hidden ones (and their contents) left out.
fn supporting_files(folder: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut pending = vec![folder.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.filter_map(Result::ok) {
            let path = entry.path();
            if hidden(&path) {
                continue;
            }
            // Symlinks are not followed: a link could lead anywhere on the disk.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_file()
                && let Ok(relative) = path.strip_prefix(folder)
            {
                let relative: Vec<String> = relative
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                let relative = relative.join("/");
                if relative != SKILL_FILE {
                    out.push(relative);
                }
            }
        }
    }
    out.sort();
    out.truncate(MAX_FILES);
    out
}

fn hidden(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(path: &Path, text: &str) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("dir");
        }
        std::fs::write(path, text).expect("write");
    }

    #[test]
    fn good_skills_load_beside_a_broken_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        write(
            &dir.path().join("alpha/SKILL.md"),
            "---\nname: alpha\ndescription: The first.\n---\nDo A.\n",
        );
        write(&dir.path().join("alpha/scripts/run.py"), "print(1)\n");
        write(&dir.path().join("alpha/.git/config"), "hidden\n");
        write(
            &dir.path().join("broken/SKILL.md"),
            "---\nname: broken\n---\n",
        );
        write(&dir.path().join("notes/readme.txt"), "not a skill\n");
        let dirs = SkillDirs {
            home: dir.path().to_path_buf(),
            named: vec![dir.path().join("missing")],
        };
        let skills = Skills::load(&dirs);
        assert_eq!(skills.skills.len(), 1, "{skills:?}");
        assert_eq!(skills.skills[0].files, ["scripts/run.py"]);
        assert_eq!(skills.problems.len(), 2);
        let said = skills.problems[0].to_string();
        assert!(
            said.contains("broken/SKILL.md:3: the frontmatter has no `description`; add"),
            "{said}"
        );
        let missing = skills.problems[1].to_string();
        assert!(
            missing
                .contains("missing: this folder of skills, named in [skills] dirs, cannot be read"),
            "{missing}"
        );
        // The home folder may be missing: nothing installed yet.
        let empty = Skills::load(&SkillDirs {
            home: dir.path().join("nothing-here"),
            named: Vec::new(),
        });
        assert!(empty.skills.is_empty() && empty.problems.is_empty());
    }

    #[test]
    fn the_first_of_two_skills_with_one_name_wins() {
        let one = tempfile::tempdir().expect("temp dir");
        let two = tempfile::tempdir().expect("temp dir");
        for dir in [&one, &two] {
            write(
                &dir.path().join("same/SKILL.md"),
                "---\nname: same\ndescription: d\n---\n",
            );
        }
        let skills = Skills::load(&SkillDirs {
            home: one.path().to_path_buf(),
            named: vec![two.path().to_path_buf()],
        });
        assert_eq!(skills.skills[0].dir, one.path().join("same"));
        assert!(skills.problems[0].message.contains("already loaded"));
    }
}
