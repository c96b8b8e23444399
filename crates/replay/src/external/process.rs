//! The `--executor` program as a child process: started once, one JSON request a line on its
//! stdin, one JSON answer a line on its stdout (the protocol is the parent module's).

use crate::Error;
use serde_json::Value;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// A running `--executor` program.
pub struct External {
    command: String,
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl External {
    /// Starts `sh -c command` with `env` added to its environment.
    pub fn spawn(command: &str, env: &[(&str, String)]) -> Result<External, Error> {
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(command)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| Error::Refused(format!("--executor `{command}` cannot start: {e}")))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Error::Refused(format!(
                "--executor `{command}`: no pipe to its stdin and stdout"
            )));
        };
        Ok(External {
            command: command.to_string(),
            child,
            stdin,
            stdout: BufReader::new(stdout).lines(),
        })
    }

    /// Sends one request and reads its answer (an `{"error": …}` answer is `Err`).
    pub async fn call(&mut self, request: &Value) -> Result<(Value, Duration), Error> {
        let gone = |why: String| Error::Refused(format!("--executor `{}`: {why}", self.command));
        let mut line = request.to_string();
        line.push('\n');
        let start = Instant::now();
        self.stdin
            .write_all(line.as_bytes())
            .await
            .map_err(|e| gone(format!("cannot write a request: {e}")))?;
        self.stdin
            .flush()
            .await
            .map_err(|e| gone(format!("cannot write a request: {e}")))?;
        let answer = self
            .stdout
            .next_line()
            .await
            .map_err(|e| gone(format!("cannot read its answer: {e}")))?
            .ok_or_else(|| gone("it ended without answering".into()))?;
        let elapsed = start.elapsed();
        let v: Value = serde_json::from_str(&answer)
            .map_err(|e| Error::Executor(format!("an answer that is not JSON ({e}): {answer}")))?;
        if let Some(e) = v.get("error") {
            return Err(Error::Executor(
                e.as_str().map_or(e.to_string(), str::to_string),
            ));
        }
        Ok((v, elapsed))
    }

    /// Closes its stdin and waits for it to end.
    pub async fn finish(mut self) {
        drop(self.stdin);
        let _ = self.child.wait().await;
    }
}
