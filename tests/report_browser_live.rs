//! The rideshare report in a real browser: headless Chromium (Debian `chromium`, installed by
//! scripts/test) opens the built HTML from local files with the network features off, and the
//! Mermaid ER diagram has been drawn as SVG in the DOM. The screenshot stays under
//! `target/report-screenshots/` as a CI artifact.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use support::{command as bin, root, text};

/// The Chromium binary (the gate of the test made sure there is one).
fn chromium() -> PathBuf {
    remodel_testdb::live::chromium().expect("chromium on PATH")
}

/// What a Chromium run printed and how it ended.
struct Run {
    success: bool,
    stdout: String,
    stderr: String,
}

/// Runs headless Chromium on a local page with a fresh profile (`dir/profile`) and every feature
/// that would reach for the network off (without them it waits on connections this machine cannot
/// make); kills it after two minutes. Output goes to files in `dir`: a DOM dump is larger than a
/// pipe holds, and an undrained pipe would stall the browser.
fn chromium_run(dir: &Path, extra: &[String], page: &Path) -> Run {
    std::fs::create_dir_all(dir).expect("mkdir");
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let file = |p: &Path| std::fs::File::create(p).expect("create");
    let mut child = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            "--disable-quic",
            // Lets the page's scripts (Mermaid) finish before the DOM or the picture is taken.
            "--virtual-time-budget=15000",
        ])
        .arg(format!("--user-data-dir={}", dir.join("profile").display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(file(&out_path))
        .stderr(file(&err_path))
        .spawn()
        .expect("start chromium");
    let started = Instant::now();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return Run {
                success: status.success(),
                stdout: read(&out_path),
                stderr: read(&err_path),
            };
        }
        if started.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish in 120 s:\n{}", read(&err_path));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn mermaid_er_diagram_renders_to_svg_offline() {
    remodel_testdb::live!(Chromium, Mdbook);
    let work = std::env::temp_dir().join(format!("remodel-report-browser-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&work);
    let out = work.join("rideshare");
    let run = bin()
        .args(["plan", "examples/rideshare", "--out"])
        .arg(&out)
        .output()
        .expect("remodel plan");
    assert!(run.status.success(), "{}", text(&run.stderr));
    let run = bin()
        .arg("report")
        .arg("--plan")
        .arg(out.join("plan.json"))
        .arg("--html")
        .output()
        .expect("remodel report --html");
    assert!(run.status.success(), "{}", text(&run.stderr));
    let page = out
        .join("report/book/source-schema.html")
        .canonicalize()
        .expect("built page");

    let dom = chromium_run(&work.join("dom"), &["--dump-dom".into()], &page);
    assert!(dom.success, "{}", dom.stderr);
    let dom = dom.stdout;
    let svg_at = dom.find("aria-roledescription=\"er\"").unwrap_or_else(|| {
        panic!(
            "no Mermaid ER diagram drawn in the DOM:\n{}",
            &dom[..dom.len().min(4000)]
        )
    });
    let svg = &dom[svg_at..];
    let svg = &svg[..svg.find("</svg>").expect("the SVG closes")];
    for entity in ["cities", "drivers", "trips"] {
        assert!(
            svg.contains(&format!(">{entity}<")),
            "entity {entity} not drawn"
        );
    }
    assert!(
        !dom.contains("language-mermaid"),
        "a mermaid block was left as code"
    );

    let shots = root().join("target/report-screenshots");
    std::fs::create_dir_all(&shots).expect("mkdir");
    let png = shots.join("rideshare-source-schema.png");
    let _ = std::fs::remove_file(&png);
    let shot = chromium_run(
        &work.join("shot"),
        &[
            "--window-size=1280,1400".into(),
            format!("--screenshot={}", png.display()),
        ],
        &page,
    );
    assert!(shot.success, "{}", shot.stderr);
    let bytes = std::fs::read(&png).expect("the screenshot is written");
    assert!(bytes.starts_with(b"\x89PNG"), "not a PNG");
    // A blank 1280x1400 page compresses to a few KiB; the drawn diagram and text take far more.
    assert!(
        bytes.len() > 40_000,
        "screenshot only {} bytes",
        bytes.len()
    );
    let _ = std::fs::remove_dir_all(&work);
}
