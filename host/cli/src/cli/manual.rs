//! Shell completions and manual pages, both generated from the clap
//! definition of the command line, so that they can never disagree with
//! `--help`.

use std::path::{Path, PathBuf};

use clap::{Args, CommandFactory};
use clap_complete::Shell;

use super::{Cli, Result, print_bytes};

/// Arguments of `wloc completions`.
#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to write completions for (bash, zsh, fish, elvish, powershell).
    #[arg(value_enum)]
    shell: Shell,
}

/// Arguments of `wloc manual`.
#[derive(Args, Debug)]
pub struct ManualArgs {
    /// The folder to write the manual pages into (created if missing):
    /// `wloc.1`, then `wloc-COMMAND.1` for every command and
    /// `wloc-COMMAND-SUBCOMMAND.1` for nested ones.
    dir: PathBuf,
}

/// Writes the completion script of `a.shell` on standard output.
pub fn completions(a: &CompletionsArgs) -> Result {
    let mut cmd = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, "wloc", &mut out);
    print_bytes(&out)
}

/// Writes one manual page per command into `a.dir`.
pub fn manual(a: &ManualArgs) -> Result {
    let written = write_manual(&a.dir)?;
    for p in written {
        println!("{}", p.display());
    }
    Ok(())
}

/// Writes the manual pages into `dir` and returns the files written.
pub fn write_manual(dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut cmd = Cli::command();
    cmd.build();
    let mut written = Vec::new();
    write_page(dir, &cmd, "wloc", &mut written)?;
    Ok(written)
}

fn write_page(dir: &Path, cmd: &clap::Command, name: &str, written: &mut Vec<PathBuf>) -> Result {
    // Each page is titled with its full name (`wloc-ls`), as man pages of
    // git-style tools are, so that `man wloc-ls` finds it.
    // clap takes a command's name as a 'static str (without its `string`
    // feature); one small leak per page of a one-shot command.
    let page_name: &'static str = Box::leak(name.to_string().into_boxed_str());
    let page_cmd = cmd.clone().name(page_name);
    let mut text = Vec::new();
    clap_mangen::Man::new(page_cmd)
        .render(&mut text)
        .map_err(|e| format!("cannot render the manual page of {name}: {e}"))?;
    let path = dir.join(format!("{name}.1"));
    wloc::files::write(&path, &text)?;
    written.push(path);
    for sub in cmd.get_subcommands() {
        if sub.get_name() == "help" {
            continue;
        }
        write_page(dir, sub, &format!("{name}-{}", sub.get_name()), written)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command has a page, and every option and argument that
    /// `--help` shows appears in its page.
    #[test]
    fn every_command_and_option_is_in_its_manual_page() {
        let dir = std::env::temp_dir().join(format!("wloc-manual-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let written = write_manual(&dir).unwrap();
        let mut cmd = Cli::command();
        cmd.build();
        let mut stack = vec![("wloc".to_string(), cmd)];
        let mut checked = 0;
        while let Some((name, c)) = stack.pop() {
            let path = dir.join(format!("{name}.1"));
            assert!(written.contains(&path), "no manual page for {name}");
            // roff escapes '-' as '\-'; undo it to search for option names.
            let page = std::fs::read_to_string(&path).unwrap().replace("\\-", "-");
            for arg in c.get_arguments().filter(|a| !a.is_hide_set()) {
                let shown = if let Some(l) = arg.get_long() {
                    format!("--{l}")
                } else if let Some(s) = arg.get_short() {
                    format!("-{s}")
                } else {
                    arg.get_value_names()
                        .and_then(|v| v.first())
                        .map(|v| v.to_string())
                        .unwrap_or_else(|| arg.get_id().to_string().to_uppercase())
                };
                assert!(
                    page.contains(&shown),
                    "{name}: `{shown}` is in --help but not in {}",
                    path.display()
                );
                checked += 1;
            }
            for sub in c.get_subcommands() {
                if sub.get_name() != "help" {
                    stack.push((format!("{name}-{}", sub.get_name()), sub.clone()));
                }
            }
        }
        assert!(checked > 100, "only {checked} options checked");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn completions_name_every_command() {
        let mut cmd = Cli::command();
        let mut out = Vec::new();
        clap_complete::generate(Shell::Bash, &mut cmd, "wloc", &mut out);
        let text = String::from_utf8(out).unwrap();
        for sub in Cli::command().get_subcommands() {
            assert!(text.contains(sub.get_name()), "{} missing", sub.get_name());
        }
    }
}
