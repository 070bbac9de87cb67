//! No orphans: when `capabilities` gets Ctrl-C or SIGTERM while sources are starting, their child
//! processes and grandchildren go with it.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::Home;

/// Pids of processes whose command line contains `needle`.
pub fn processes_with(needle: &str) -> Vec<u32> {
    let mut pids = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return pids;
    };
    for entry in entries.flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if cmdline.contains(needle) {
                pids.push(pid);
            }
        }
    }
    pids
}

pub fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn interrupted_run_leaves_no_processes(name: &str, signal: u32, expected_code: i32) {
    let home = Home::new();
    // Unique sleep lengths mark this test's grandchildren in the process table.
    let mark = 40_000 + (std::process::id() % 10_000) * 2 + signal;
    home.write_config(&format!(
        "[sources.hangs]\ncommand = \"sh\"\nargs = [\"-c\", \"sleep {mark} & sleep {mark}.5\"]\nconnect_timeout_secs = 60\n"
    ));
    let mut child = home
        .command(&["search", "anything", "--refresh"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start capabilities");
    let needle = format!("sleep {mark}");
    wait_for("the source's processes to start", || {
        processes_with(&needle).len() >= 2
    });
    crate::support::send_signal(child.id(), name);
    let status = child.wait().expect("wait");
    assert_eq!(status.code(), Some(expected_code));
    wait_for("the source's processes to be gone", || {
        processes_with(&needle).is_empty()
    });
}

#[test]
fn sigterm_takes_children_and_grandchildren_down() {
    interrupted_run_leaves_no_processes("TERM", 15, 143);
}

#[test]
fn ctrl_c_takes_children_and_grandchildren_down() {
    interrupted_run_leaves_no_processes("INT", 2, 130);
}
