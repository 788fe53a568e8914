//! Running the package managers (pip, apt-get) that assets come from.

use std::process::Command;

use super::error::AssetError;

/// Runs `command` to completion, logging it first. On failure the error carries the command
/// line and the tail of its stderr, which is where pip and apt-get say what went wrong.
pub(crate) fn run(command: &mut Command, log: &mut dyn FnMut(&str)) -> Result<(), AssetError> {
    let line = describe(command);
    log(&format!("running {line}"));
    let output = command.output().map_err(|e| AssetError::Command {
        command: line.clone(),
        detail: e.to_string(),
    })?;
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(AssetError::Command {
        command: line,
        detail: format!("{}: {}", output.status, tail.join(" | ")),
    })
}

fn describe(command: &Command) -> String {
    std::iter::once(command.get_program())
        .chain(command.get_args())
        .map(|part| part.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_names_the_command_and_its_stderr() {
        let mut log = Vec::new();
        let err = run(
            Command::new("sh").args(["-c", "echo boom >&2; exit 3"]),
            &mut |line: &str| log.push(line.to_string()),
        )
        .unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains("`sh -c echo boom >&2; exit 3`"),
            "{message}"
        );
        assert!(message.contains("boom"), "{message}");
        assert_eq!(log, vec!["running sh -c echo boom >&2; exit 3"]);
    }
}
