//! The terminal UI (issue 20): what a frame costs while a reply streams under a 10 000-line
//! transcript, and how often an idle pi wakes up — ours beside pi 0.73.1 where it can be run.
//!
//! * Frames: a 120 × 40 terminal holds a 10 000-line transcript; a 150-word reply then streams a
//!   word at a time as Markdown above a loader, the editor and the footer. For each frame: the
//!   time to lay it out and write it, and the bytes written. Ours: `pi_tui::Markdown` and the
//!   `InlineRenderer` (the transcript is committed output, in the terminal's scrollback). pi:
//!   pi-tui's `TUI` with its `Markdown` and `Text` components on a terminal that counts bytes,
//!   `doRender()` called per frame (its differential renderer compares all 10 000 lines).
//! * Idle wake-ups: the real program under tmux (`pi --demo` for ours; pi 0.73.1's `cli.js` with
//!   Node.js), sitting at its prompt; context switches of all its threads
//!   (`/proc/<pid>/task/*/status`) over `PI_BENCH_IDLE_SECS` seconds (default 5).
//!
//! pi is measured when Node.js and pi 0.73.1's package are found (`pi_test_support::pi073`), else
//! its row says why not. Without tmux the idle rows say so. `cargo test --benches` (no `--bench`
//! argument) is the smoke test: a short stream of ours.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use pi_test_support::pi073;
use pi_tui::{Component, InlineRenderer, Line, Markdown, Theme};

const WIDTH: u16 = 120;
const HEIGHT: u16 = 40;
const TRANSCRIPT_LINES: usize = 10_000;
const REPLY_WORDS: usize = 150;

/// A writer that only counts.
#[derive(Default)]
struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The reply's words (prose with some markdown, as a model writes).
fn reply_words(count: usize) -> Vec<String> {
    let base = "The **renderer** keeps finished output in the terminal's scrollback and redraws only \
                the `live` region at the bottom, so a frame costs what changed on screen.";
    base.split(' ').cycle().take(count).map(str::to_owned).collect()
}

/// A transcript line `i` (varied lengths, as a conversation has).
fn transcript_line(i: usize) -> String {
    format!("{i:05} {}", "lorem ipsum dolor sit amet ".repeat(1 + i % 4).trim_end())
}

/// Frame statistics: mean and 95th-percentile time, total bytes.
struct Frames {
    times: Vec<Duration>,
    bytes: usize,
}

impl Frames {
    fn line(&self, who: &str) -> String {
        let mut sorted = self.times.clone();
        sorted.sort();
        let n = sorted.len().max(1);
        let mean = sorted.iter().sum::<Duration>() / n as u32;
        let p95 = sorted[(n * 95 / 100).min(n - 1)];
        format!(
            "{who}: {} frames, mean {:.3} ms, p95 {:.3} ms per frame; {} bytes written ({} per frame)",
            sorted.len(),
            mean.as_secs_f64() * 1000.0,
            p95.as_secs_f64() * 1000.0,
            self.bytes,
            self.bytes / n
        )
    }
}

/// Ours: the transcript committed, then the reply streamed word by word.
fn our_frames(transcript: usize, words: usize) -> Frames {
    let theme = Theme::dark();
    let mut renderer = InlineRenderer::new(Counter::default(), WIDTH, HEIGHT);
    let committed: Vec<Line> = (0..transcript).map(|i| Line::from(transcript_line(i))).collect();
    renderer.commit(&committed).unwrap();
    renderer.flush().unwrap();
    let footer = [
        Line::from(""),
        Line::from("> "),
        Line::from("~/project (main)"),
        Line::from("↑1.2k ↓300 $0.004 0.9%/128k (auto)                                   faux-1"),
    ];
    renderer.writer_mut().0 = 0;
    let mut text = String::new();
    let mut times = Vec::new();
    for (i, word) in reply_words(words).iter().enumerate() {
        text.push_str(word);
        text.push(' ');
        let start = Instant::now();
        let mut live = Markdown::new(text.clone(), &theme).render(WIDTH - 2);
        live.push(Line::from(format!("{} Working… ({}s)", ["⠋", "⠙", "⠹"][i % 3], i / 10)));
        live.extend(footer.iter().cloned());
        renderer.draw(&live).unwrap();
        times.push(start.elapsed());
    }
    Frames {
        times,
        bytes: renderer.writer().0,
    }
}

/// pi-tui's side, run by node: prints `frames <n> bytes <b> mean_ms <m> p95_ms <p>`.
const PI_FRAMES_JS: &str = r#"
const [pkg, lines, words] = [process.argv[2], Number(process.argv[3]), Number(process.argv[4])];
const { TUI, Text, Markdown } = await import(pkg + "/node_modules/@mariozechner/pi-tui/dist/index.js")
  .catch(() => import(pkg + "/../pi-tui/dist/index.js"));
let bytes = 0;
const terminal = { start() {}, stop() {}, async drainInput() {}, write(d) { bytes += Buffer.byteLength(d); },
  get columns() { return 120; }, get rows() { return 40; }, get kittyProtocolActive() { return false; },
  moveBy() {}, hideCursor() {}, showCursor() {}, clearLine() {}, clearFromCursor() {}, clearScreen() {},
  setTitle() {}, setProgress() {} };
const id = (t) => t;
const theme = { heading: id, link: id, linkUrl: id, code: id, codeBlock: id, codeBlockBorder: id, quote: id,
  quoteBorder: id, hr: id, listBullet: id, bold: id, italic: id, strikethrough: id, underline: id };
const tui = new TUI(terminal);
const line = (i) => `${String(i).padStart(5, "0")} ${"lorem ipsum dolor sit amet ".repeat(1 + (i % 4)).trimEnd()}`;
for (let i = 0; i < lines; i += 5) {
  tui.addChild(new Text([0, 1, 2, 3, 4].map((k) => line(i + k)).join("\n"), 0, 0));
}
const md = new Markdown("", 1, 0, theme);
const loader = new Text("", 0, 0);
tui.addChild(md);
tui.addChild(loader);
tui.addChild(new Text("\n> \n~/project (main)\n↑1.2k ↓300 $0.004 0.9%/128k (auto)                                   faux-1", 0, 0));
tui.doRender();
bytes = 0;
const base = "The **renderer** keeps finished output in the terminal's scrollback and redraws only the `live` region at the bottom, so a frame costs what changed on screen.".split(" ");
let text = "";
const times = [];
for (let i = 0; i < words; i++) {
  text += base[i % base.length] + " ";
  const start = performance.now();
  md.setText(text);
  loader.setText(`${["⠋", "⠙", "⠹"][i % 3]} Working… (${Math.floor(i / 10)}s)`);
  tui.doRender();
  times.push(performance.now() - start);
}
times.sort((a, b) => a - b);
const mean = times.reduce((a, b) => a + b, 0) / times.length;
console.log(`frames ${times.length} bytes ${bytes} mean_ms ${mean} p95_ms ${times[Math.min(times.length - 1, Math.floor(times.length * 0.95))]}`);
process.exit(0);
"#;

/// pi 0.73.1's package directory, or why it cannot be run.
fn pi_package() -> Result<PathBuf, String> {
    let dir = pi073::package(&pi073::process_env).map_err(|e| e.to_string())?;
    let node = Command::new("node").arg("--version").output();
    if !node.is_ok_and(|o| o.status.success()) {
        return Err("Node.js not found".to_owned());
    }
    Ok(dir)
}

fn pi_frames(package: &Path) -> String {
    let script = tempfile::Builder::new().suffix(".mjs").tempfile().unwrap();
    std::fs::write(script.path(), PI_FRAMES_JS).unwrap();
    let out = Command::new("node")
        .arg(script.path())
        .arg(package)
        .arg(TRANSCRIPT_LINES.to_string())
        .arg(REPLY_WORDS.to_string())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let fields: Vec<&str> = stdout.split_whitespace().collect();
    match fields.as_slice() {
        ["frames", frames, "bytes", bytes, "mean_ms", mean, "p95_ms", p95] => {
            let (mean, p95): (f64, f64) = (mean.parse().unwrap_or(0.0), p95.parse().unwrap_or(0.0));
            let (frames, bytes): (usize, usize) = (frames.parse().unwrap_or(1), bytes.parse().unwrap_or(0));
            format!(
                "pi 0.73.1 (pi-tui): {frames} frames, mean {mean:.3} ms, p95 {p95:.3} ms per frame; {bytes} bytes written ({} per frame)",
                bytes / frames.max(1)
            )
        }
        _ => format!(
            "pi 0.73.1 (pi-tui): not measured, its script failed: {}",
            String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or("")
        ),
    }
}

/// Runs `script` in a tmux pane of a server of its own until `ready` shows, then counts the
/// context switches of the pane's program (the shell's child) over `secs` seconds.
fn idle_wakeups(name: &str, script: &str, ready: &str, secs: u64) -> Result<u64, String> {
    let socket = format!("pi-bench-{name}-{}", std::process::id());
    let tmux = |args: &[&str]| {
        Command::new("tmux")
            .args(["-L", &socket, "-f", "/dev/null"])
            .args(args)
            .output()
            .map_err(|e| format!("tmux: {e}"))
    };
    tmux(&[
        "new-session",
        "-d",
        "-s",
        "b",
        "-x",
        "120",
        "-y",
        "40",
        "sh",
        "-c",
        script,
    ])?;
    let result = (|| {
        let start = Instant::now();
        loop {
            let pane = tmux(&["capture-pane", "-p", "-t", "b"])?;
            if String::from_utf8_lossy(&pane.stdout).contains(ready) {
                break;
            }
            if start.elapsed() > Duration::from_secs(60) {
                return Err(format!("{ready:?} did not show within 60 s"));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        let out = tmux(&["display-message", "-p", "-t", "b", "#{pane_pid}"])?;
        let shell = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let children =
            std::fs::read_to_string(format!("/proc/{shell}/task/{shell}/children")).map_err(|e| e.to_string())?;
        let pid = children
            .split_whitespace()
            .next()
            .ok_or("no program in the pane")?
            .to_owned();
        std::thread::sleep(Duration::from_secs(3));
        let before = context_switches(&pid);
        std::thread::sleep(Duration::from_secs(secs));
        Ok(context_switches(&pid).saturating_sub(before))
    })();
    let _ = tmux(&["kill-server"]);
    result
}

fn context_switches(pid: &str) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("status")).ok())
        .flat_map(|status| {
            status
                .lines()
                .filter_map(|line| {
                    line.strip_prefix("voluntary_ctxt_switches:")
                        .or_else(|| line.strip_prefix("nonvoluntary_ctxt_switches:"))
                        .and_then(|n| n.trim().parse::<u64>().ok())
                })
                .collect::<Vec<_>>()
        })
        .sum()
}

fn quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

fn main() {
    let full = std::env::args().any(|a| a == "--bench");
    if !full {
        let frames = our_frames(200, 20);
        assert!(frames.bytes > 0 && frames.times.len() == 20);
        println!("{}", frames.line("ours (smoke)"));
        return;
    }
    println!("TUI: {REPLY_WORDS}-word reply streamed under a {TRANSCRIPT_LINES}-line transcript, {WIDTH}x{HEIGHT}");
    println!("{}", our_frames(TRANSCRIPT_LINES, REPLY_WORDS).line("ours"));
    let package = pi_package();
    match &package {
        Ok(dir) => println!("{}", pi_frames(dir)),
        Err(why) => println!("pi 0.73.1: not measured ({why})"),
    }
    let secs: u64 = std::env::var("PI_BENCH_IDLE_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    println!("Idle wake-ups (context switches of all threads) over {secs} s at the prompt, under tmux:");
    let home = tempfile::tempdir().unwrap();
    let ours = Path::new(env!("CARGO_BIN_EXE_pi"));
    let script = format!(
        "env TERM=xterm-256color HOME={h} PI_CODING_AGENT_DIR={h}/agent {pi} --demo; sleep 30",
        h = quote(home.path()),
        pi = quote(ours)
    );
    match idle_wakeups("ours", &script, "Send any message", secs) {
        Ok(n) => println!("ours: {n} wake-ups"),
        Err(why) => println!("ours: not measured ({why})"),
    }
    match &package {
        Ok(dir) => {
            let pi_home = tempfile::tempdir().unwrap();
            let script = format!(
                "env TERM=xterm-256color HOME={h} node {cli}; sleep 30",
                h = quote(pi_home.path()),
                cli = quote(&dir.join("dist/cli.js"))
            );
            match idle_wakeups("pi", &script, "escape interrupt", secs) {
                Ok(n) => println!("pi 0.73.1: {n} wake-ups"),
                Err(why) => println!("pi 0.73.1: not measured ({why})"),
            }
        }
        Err(why) => println!("pi 0.73.1: not measured ({why})"),
    }
}
