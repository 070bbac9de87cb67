//! `capabilities skill list|show|add|remove`: the local skills the agent can find with search
//! and read with describe. `add` copies a checked folder into the skills/ beside the config;
//! `remove` deletes only from there, never from a folder `[skills] dirs` names.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, bail};
use serde_json::json;

use super::output::{eprint_line, print};
use crate::app::App;
use crate::cli::{SkillAddArgs, SkillListArgs, SkillNameArgs};
use crate::skills::describe::describe;
use crate::skills::{PREFIX, SKILL_FILE, Skills, load_one};

/// `show` prints a skill whole: a budget no skill reaches.
const SHOW_BUDGET: usize = 1 << 24;

pub fn list(app: &App, args: &SkillListArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings()?;
    let skills = Skills::load(&settings.skill_dirs);
    if args.json {
        let value = json!({
            "skills": skills.skills.iter().map(|s| json!({
                "name": s.name,
                "description": s.description,
                "dir": s.dir,
                "files": s.files,
            })).collect::<Vec<_>>(),
            "problems": skills.problems.iter().map(|p| json!({
                "file": p.file,
                "line": p.line,
                "message": p.message,
                "fix": p.fix,
            })).collect::<Vec<_>>(),
        });
        print(&format!("{value:#}\n"))?;
    } else {
        let mut out = String::new();
        for skill in &skills.skills {
            out.push_str(&format!(
                "{PREFIX}{} — {}\n",
                skill.name,
                one_line(&skill.description)
            ));
        }
        if skills.skills.is_empty() && skills.problems.is_empty() {
            eprint_line(format_args!(
                "no skills yet: put a folder with a SKILL.md in {}, or add one with `{}`",
                settings.skill_dirs.home.display(),
                app.command("skill add PATH")
            ));
        }
        print(&out)?;
    }
    for problem in &skills.problems {
        eprint_line(format_args!("error: {problem}"));
    }
    // The loaded skills are served all the same; the exit code tells a script some were not.
    Ok(if skills.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn show(app: &App, args: &SkillNameArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings()?;
    let skills = Skills::load(&settings.skill_dirs);
    let text = describe(&skills, &format!("{PREFIX}{}", args.name), SHOW_BUDGET)
        .map_err(anyhow::Error::msg)?;
    print(&text)?;
    Ok(ExitCode::SUCCESS)
}

pub fn add(app: &App, args: &SkillAddArgs) -> anyhow::Result<ExitCode> {
    let source = &args.path;
    if !source.join(SKILL_FILE).is_file() {
        bail!(
            "{} has no {SKILL_FILE}: a skill is a folder with a {SKILL_FILE} (YAML frontmatter with `name` and `description`, then instructions)",
            source.display()
        );
    }
    let skill = load_one(source).map_err(|problem| anyhow::anyhow!("{problem}"))?;
    let settings = app.settings()?;
    let installed = Skills::load(&settings.skill_dirs);
    if let Some(existing) = installed.get(&skill.name) {
        bail!(
            "a skill named `{}` is already installed at {}; remove it first with `{}`",
            skill.name,
            existing.dir.display(),
            app.command(&format!("skill remove {}", skill.name))
        );
    }
    let target = settings.skill_dirs.home.join(&skill.name);
    if target.exists() {
        bail!(
            "{} already exists (it is not a loadable skill); move it away first",
            target.display()
        );
    }
    install_folder(source, &target)
        .with_context(|| format!("cannot copy {} to {}", source.display(), target.display()))?;
    eprint_line(format_args!(
        "added skill `{}` ({} supporting files) to {}",
        skill.name,
        skill.files.len(),
        target.display()
    ));
    Ok(ExitCode::SUCCESS)
}

pub fn remove(app: &App, args: &SkillNameArgs) -> anyhow::Result<ExitCode> {
    let settings = app.settings()?;
    let skills = Skills::load(&settings.skill_dirs);
    let Some(skill) = skills.get(&args.name) else {
        let known: Vec<&str> = skills.skills.iter().map(|s| s.name.as_str()).collect();
        bail!(
            "there is no skill `{}`; {}",
            crate::error_text::echo(&args.name),
            if known.is_empty() {
                "no skills are installed".to_string()
            } else {
                format!("the skills are {}", known.join(", "))
            }
        );
    };
    if skill.dir.parent() != Some(settings.skill_dirs.home.as_path()) {
        bail!(
            "skill `{}` lives in {}, a folder the config's [skills] dirs names; delete it there, or drop the folder from [skills] dirs",
            skill.name,
            skill.dir.display()
        );
    }
    std::fs::remove_dir_all(&skill.dir)
        .with_context(|| format!("cannot delete {}", skill.dir.display()))?;
    eprint_line(format_args!(
        "removed skill `{}` ({})",
        skill.name,
        skill.dir.display()
    ));
    Ok(ExitCode::SUCCESS)
}

/// Copies `from` to the new folder `to` whole or not at all: the copy is made in a hidden
/// folder beside `to` (skills are loaded from visible folders only) and renamed into place once
/// complete, so a refused or failed copy never leaves a partial skill that loads and blocks the
/// retry.
fn install_folder(from: &Path, to: &Path) -> anyhow::Result<()> {
    let (Some(parent), Some(name)) = (to.parent(), to.file_name()) else {
        bail!("{} is not a folder a skill can be added as", to.display());
    };
    std::fs::create_dir_all(parent)?;
    let staging = tempfile::Builder::new()
        .prefix(&format!(".{}.adding-", name.to_string_lossy()))
        .tempdir_in(parent)?;
    copy_folder(from, staging.path())?;
    // On success the staging folder becomes the skill; on any error `staging` drops and
    // deletes what was copied.
    std::fs::rename(staging.path(), to)?;
    // Already renamed away: nothing is left for the guard to delete.
    let _ = staging.keep();
    Ok(())
}

/// Copies `from` into the folder `to`: regular files and folders, hidden entries left out
/// (as the skill lists them), symlinks refused (they could point anywhere).
fn copy_folder(from: &Path, to: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let kind = entry.file_type()?;
        let target = to.join(&name);
        if kind.is_dir() {
            copy_folder(&entry.path(), &target)?;
        } else if kind.is_file() {
            std::fs::copy(entry.path(), &target)?;
        } else {
            bail!(
                "{} is a symlink or special file; copy what it points to into the skill instead",
                entry.path().display()
            );
        }
    }
    Ok(())
}

/// A description on one line, as a list shows it.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
