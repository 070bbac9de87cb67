//! Reading a person's answer on the terminal. A read blocks its thread until Enter, and the
//! verbs run on the thread that also watches for Ctrl-C, so the read runs on a thread of its
//! own and is awaited: Ctrl-C at a question stops the verb at once, as a person expects.

use anyhow::Context;
use std::io::BufRead;

/// One line from standard input (`None` at its end).
pub async fn read_line() -> anyhow::Result<Option<String>> {
    let (send, answer) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("prompt".into())
        .spawn(move || {
            let mut line = String::new();
            let read = std::io::stdin().lock().read_line(&mut line);
            let _ = send.send(read.map(|n| (n > 0).then_some(line)));
        })
        .context("cannot read the answer from the terminal")?;
    Ok(answer
        .await
        .context("cannot read the answer from the terminal")??)
}
