//! `cql-probe [--timeout-secs N] [--only] [HOST:PORT]`: asks a Cassandra node
//! `SELECT release_version FROM system.local` through the scylla driver and prints the
//! answer. `scripts/db up` uses it as the readiness check. Exit 0 when answered, 1 when
//! not, 2 on bad arguments. The node defaults to `REMODEL_CQL_URL`. With `--only` the query
//! goes to that node and no other (in a cluster the driver would otherwise let any node answer).

use std::process::ExitCode;
use std::time::Duration;

const USAGE: &str = "usage: cql-probe [--timeout-secs N] [--only] [HOST:PORT]";

/// What to ask.
struct Args {
    node: Option<String>,
    timeout: Duration,
    only: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut node = None;
    let mut only = false;
    let mut timeout = Duration::from_secs(10);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--timeout-secs" => {
                let value = args.next().ok_or("--timeout-secs needs a value")?;
                let secs: u64 = value
                    .parse()
                    .map_err(|_| format!("--timeout-secs: {value:?} is not a whole number"))?;
                timeout = Duration::from_secs(secs.max(1));
            }
            "--only" => only = true,
            "-h" | "--help" => return Err(String::new()),
            _ if node.is_none() && !arg.starts_with('-') => node = Some(arg),
            _ => return Err(format!("unexpected argument {arg:?}")),
        }
    }
    Ok(Args {
        node,
        timeout,
        only,
    })
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let Args {
        node,
        timeout,
        only,
    } = match parse_args() {
        Ok(parsed) => parsed,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("cql-probe: {msg}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let node = match node.map_or_else(remodel_testdb::cql_node, Ok) {
        Ok(node) => node,
        Err(e) => {
            eprintln!("cql-probe: {e}");
            return ExitCode::from(2);
        }
    };
    let answer = async {
        let session = remodel_testdb::connect_cql(&node, timeout).await?;
        if only {
            remodel_testdb::release_version_of_node(&session, &node).await
        } else {
            remodel_testdb::release_version(&session, &node).await
        }
    };
    match tokio::time::timeout(timeout, answer).await {
        Ok(Ok(version)) => {
            println!("{version}");
            ExitCode::SUCCESS
        }
        Ok(Err(e)) => {
            eprintln!("cql-probe: {e}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!(
                "cql-probe: no answer from {node} within {} s",
                timeout.as_secs()
            );
            ExitCode::FAILURE
        }
    }
}
