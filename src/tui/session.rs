//! The session screen (seed 002's layout): the conversation with tagged speakers, a status
//! bar with the context bars of the manager and the current orchestrator and the tool at
//! work (`◈ run_pipeline (3)`), and an input line. The engine runs on the caller's thread
//! and reports through [`SessionScreen::observer`]; drawing, keys and the human's lines
//! live on a thread of their own, so the screen stays alive (typing, a spinner, the
//! elapsed time) while a model thinks.

use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use super::term::{self, Key};
use super::text::{self, Color, Line, Style};
use crate::session::engine::{HumanInput, Observer};
use crate::session::record::{name, Event};
use crate::session::state::{Conversation, State};
use crate::session::transcript;

/// One conversation's context, as the status bar shows it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meter {
    /// `Manager`, `Orchestrator II`.
    pub name: String,
    /// How full its window is (0–1).
    pub share: f64,
}

/// What the status bar shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    /// The manager's context.
    pub manager: Meter,
    /// The current orchestrator's, if one works.
    pub orchestrator: Option<Meter>,
    /// The tool at work (or last used) and how many calls its conversation made with it.
    pub tool: Option<(String, usize)>,
    /// USD spent by the session.
    pub spent: f64,
}

/// What reaches the screen's thread.
enum Msg {
    /// The engine recorded an event: the lines it shows, and the status after it.
    Event(Vec<String>, Box<Status>),
    /// The engine waits for the human.
    Turn,
    /// A key.
    Key(Key),
    /// A line written to stderr while the screen is up.
    Stderr(String),
    /// What a tool's work says as it goes (a run's stage line), shown beside the tool.
    Activity(String),
    /// Lines of the conversation so far (a resumed session's).
    Lines(Vec<String>),
    /// Leave the screen.
    Close,
}

/// The session screen while it is up; [`SessionScreen::close`] puts the terminal back.
pub struct SessionScreen {
    tx: Sender<Msg>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// The human's lines typed on the screen: a line typed while the models work is an
/// interjection, as the seed's router wants.
pub struct ScreenInput {
    lines: Receiver<String>,
    tx: Sender<Msg>,
}

impl HumanInput for ScreenInput {
    fn next_line(&mut self) -> Option<String> {
        let _ = self.tx.send(Msg::Turn);
        self.lines.recv().ok()
    }

    fn interjection(&mut self) -> Option<String> {
        self.lines.try_recv().ok()
    }
}

impl SessionScreen {
    /// Takes over the terminal (stdin raw, the alternate screen on stdout, stderr
    /// captured into the log) and starts drawing.
    pub fn open(title: &str) -> std::io::Result<(SessionScreen, ScreenInput)> {
        term::enter_screen(0, 1)?;
        let (tx, rx) = mpsc::channel();
        let (line_tx, lines) = mpsc::channel();
        let keys = tx.clone();
        term::read_keys(move |k| keys.send(Msg::Key(k)).is_ok());
        let errs = tx.clone();
        if let Err(e) = term::capture_stderr(move |l| errs.send(Msg::Stderr(l)).is_ok()) {
            let _ = tx.send(Msg::Stderr(format!("stderr is not captured: {e}")));
        }
        let mut ui = Ui::new(title, line_tx);
        let thread = std::thread::spawn(move || ui.run(rx));
        Ok((
            SessionScreen {
                tx: tx.clone(),
                thread: Some(thread),
            },
            ScreenInput { lines, tx },
        ))
    }

    /// The engine's observer: every recorded event goes to the screen.
    pub fn observer(&self) -> Observer<'static> {
        let tx = self.tx.clone();
        Box::new(move |event: &Event, state: &State| {
            let lines = transcript::lines(event, state);
            let _ = tx.send(Msg::Event(lines, Box::new(status(event, state))));
        })
    }

    /// Shows a resumed session's conversation so far.
    pub fn replay(&self, lines: Vec<String>) {
        let _ = self.tx.send(Msg::Lines(lines));
    }

    /// Where the orchestrator's tools report their progress (a run's stages while
    /// `run_pipeline` works): shown beside the tool at work until the tool answers.
    pub fn progress(&self) -> crate::session::act::Progress {
        let tx = std::sync::Mutex::new(self.tx.clone());
        std::sync::Arc::new(move |line: &str| {
            if let Ok(tx) = tx.lock() {
                let _ = tx.send(Msg::Activity(line.to_string()));
            }
        })
    }

    /// Leaves the screen and gives the terminal back as it was.
    pub fn close(mut self) {
        let _ = self.tx.send(Msg::Close);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        term::restore();
    }
}

impl Drop for SessionScreen {
    fn drop(&mut self) {
        if self.thread.is_some() {
            let _ = self.tx.send(Msg::Close);
            term::restore();
        }
    }
}

/// The status bar after `event` was applied to `state`.
pub fn status(event: &Event, state: &State) -> Status {
    let meter = |c: &Conversation| Meter {
        name: name(c.conv),
        share: c.meter.share(),
    };
    let orchestrator = state.orchestrator.as_ref();
    // The tool just started, with its rank among its conversation's calls.
    let tool = match event {
        Event::ToolStarted {
            conv,
            call_id,
            name: tool,
        } => state.conversation(*conv).map(|c| {
            let waiting = c.unanswered();
            let before = waiting.iter().position(|u| &u.id == call_id).unwrap_or(0);
            (tool.clone(), c.tool_calls() - waiting.len() + before + 1)
        }),
        // Between calls, the orchestrator at work's last tool; with none at work (the
        // manager speaks to the human again), nothing: a released orchestrator's last tool,
        // or the manager's disconnect, is not at work.
        _ => orchestrator.and_then(|c| {
            c.messages
                .iter()
                .rev()
                .find_map(|m| m.tool_calls.last())
                .map(|t| (t.name.clone(), c.tool_calls()))
        }),
    };
    Status {
        manager: meter(&state.manager),
        orchestrator: orchestrator.map(meter),
        tool,
        spent: state.spent_usd,
    }
}

/// The screen's own state, on its thread.
struct Ui {
    title: String,
    lines: Option<Sender<String>>,
    /// The transcript lines and stderr lines, as they came.
    entries: Vec<String>,
    /// `entries` wrapped for `rows_width`.
    rows: Vec<Line>,
    rows_width: usize,
    status: Status,
    /// The tool at work's last progress line, until it answers.
    activity: Option<String>,
    input: String,
    /// Whether the engine waits for the human.
    turn: bool,
    /// Since when the models work.
    since: Instant,
    /// Lines typed while the models worked, not yet heard.
    queued: usize,
    /// Rows scrolled back from the end.
    scroll: usize,
    /// A first Ctrl-C while the models work: the second stops the session.
    armed: bool,
    notice: Option<String>,
    last: Vec<String>,
    size: (usize, usize),
}

impl Ui {
    fn new(title: &str, lines: Sender<String>) -> Ui {
        Ui {
            title: title.to_string(),
            lines: Some(lines),
            entries: Vec::new(),
            rows: Vec::new(),
            rows_width: 0,
            status: Status::default(),
            activity: None,
            input: String::new(),
            turn: false,
            since: Instant::now(),
            queued: 0,
            scroll: 0,
            armed: false,
            notice: None,
            last: Vec::new(),
            size: (0, 0),
        }
    }

    fn run(&mut self, rx: Receiver<Msg>) {
        let start = Instant::now();
        loop {
            match rx.recv_timeout(Duration::from_millis(125)) {
                Ok(Msg::Close) | Err(RecvTimeoutError::Disconnected) => return,
                Ok(msg) => self.apply(msg),
                Err(RecvTimeoutError::Timeout) => {}
            }
            // Everything already waiting is applied before one frame is drawn.
            while let Ok(msg) = rx.try_recv() {
                if matches!(msg, Msg::Close) {
                    return;
                }
                self.apply(msg);
            }
            let tick = start.elapsed().as_millis() as u64 / 125;
            self.draw(tick);
        }
    }

    fn apply(&mut self, msg: Msg) {
        match msg {
            Msg::Event(lines, status) => {
                self.status = *status;
                if !lines.is_empty() {
                    self.activity = None;
                }
                for l in lines {
                    if l.starts_with("You") {
                        self.queued = self.queued.saturating_sub(1);
                    }
                    self.push(l);
                }
            }
            Msg::Turn => {
                self.turn = true;
                self.armed = false;
                self.notice = None;
            }
            Msg::Stderr(l) => self.push(format!("stderr: {}", text::uncolored(&l))),
            Msg::Lines(lines) => lines.into_iter().for_each(|l| self.push(l)),
            // `[2/4 implement] model-a, attempt 1 of 3` → `· 2/4 implement: model-a, …`
            Msg::Activity(l) => {
                let l = text::uncolored(&l);
                let l = match l.strip_prefix('[').and_then(|r| r.split_once("] ")) {
                    Some((step, rest)) => format!("· {step}: {rest}"),
                    None => format!("· {l}"),
                };
                self.activity = Some(l);
            }
            Msg::Key(k) => self.key(k),
            Msg::Close => {}
        }
    }

    fn push(&mut self, entry: String) {
        let speaker = ["You", "Manager", "Orchestrator"]
            .iter()
            .any(|p| entry.starts_with(p));
        if speaker && !self.entries.is_empty() {
            self.entries.push(String::new());
        }
        self.entries.push(entry);
        self.rows_width = 0;
    }

    fn key(&mut self, key: Key) {
        match key {
            Key::Char(c) => self.input.push(c),
            Key::Backspace => {
                self.input.pop();
            }
            Key::Clear => self.input.clear(),
            Key::Redraw => self.last.clear(),
            Key::PageUp => self.scroll += self.size.1.saturating_sub(10).max(1),
            Key::PageDown => {
                self.scroll = self
                    .scroll
                    .saturating_sub(self.size.1.saturating_sub(10).max(1))
            }
            Key::Enter => {
                let line = std::mem::take(&mut self.input).trim().to_string();
                if line == "/quit" {
                    return self.leave();
                }
                if line.is_empty() {
                    return;
                }
                if let Some(tx) = &self.lines {
                    let _ = tx.send(line);
                }
                if self.turn {
                    self.since = Instant::now();
                } else {
                    self.queued += 1;
                }
                self.turn = false;
                self.scroll = 0;
            }
            Key::Eof if self.input.is_empty() => self.leave(),
            Key::Eof => {}
            Key::Interrupt if self.turn => self.leave(),
            Key::Interrupt if self.armed => stop_now(),
            Key::Interrupt => {
                self.armed = true;
                self.notice = Some(
                    "Ctrl-C again stops now (the session is recorded; --resume continues)".into(),
                );
            }
        }
    }

    /// The human is done: the engine leaves at their next turn.
    fn leave(&mut self) {
        self.lines = None;
        self.notice = Some(if self.turn {
            "leaving…".into()
        } else {
            "leaving when the manager next speaks to you (Ctrl-C twice: now)".into()
        });
    }

    fn draw(&mut self, tick: u64) {
        let Some((w, h)) = term::size(1) else { return };
        if (w, h) != self.size {
            self.size = (w, h);
            self.last.clear();
            term::write_all(1, b"\x1b[2J");
        }
        let frame = self.frame(w, h, tick);
        let mut out = String::new();
        for (i, line) in frame.iter().enumerate() {
            let ansi = line.ansi(w);
            if self.last.get(i) != Some(&ansi) {
                out.push_str(&format!("\x1b[{};1H{ansi}\x1b[K", i + 1));
            }
        }
        self.last = frame.iter().map(|l| l.ansi(w)).collect();
        // The cursor waits at the end of the input line.
        let col = 5 + text::width(&self.input).min(w.saturating_sub(7));
        out.push_str(&format!("\x1b[{};{}H\x1b[?25h", h.saturating_sub(1), col));
        term::write_all(1, out.as_bytes());
    }

    /// The whole screen for `w`×`h` cells.
    fn frame(&mut self, w: usize, h: usize, tick: u64) -> Vec<Line> {
        let border = Style::fg(Color::Gray);
        let inner = w.saturating_sub(4);
        if w < 40 || h < 12 {
            let mut f = vec![Line::plain(&format!(
                "git triad session: the terminal is {w}×{h}; it needs 40×12 (80×24 is comfortable)"
            ))];
            f.resize(h.saturating_sub(1), Line::default());
            f.push(Line::plain(&format!("> {}", self.input)));
            return f;
        }
        let rule = |l: char, r: char, label: &str| {
            let label = if label.is_empty() {
                String::new()
            } else {
                format!(" {label} ")
            };
            let fill = w.saturating_sub(4 + text::width(&label));
            Line::default()
                .add(&format!("{l}═"), border)
                .add(&label, Style::fg(Color::Yellow).bold())
                .add(&format!("{}═{r}", "═".repeat(fill)), border)
        };
        let boxed = |l: Line| {
            Line::default()
                .add("║ ", border)
                .add("", Style::PLAIN)
                .join(l.pad(inner))
                .add(" ║", border)
        };
        let log_h = h - 8;
        self.wrap_log(inner);
        let total = self.rows.len();
        self.scroll = self.scroll.min(total.saturating_sub(log_h));
        let end = total - self.scroll;
        let mut f = vec![rule('╔', '╗', &self.title)];
        f.extend(
            self.rows[end.saturating_sub(log_h)..end]
                .iter()
                .cloned()
                .map(boxed),
        );
        f.resize(1 + log_h, boxed(Line::default()));
        f.push(rule(
            '╠',
            '╣',
            &if self.scroll > 0 {
                format!("↓ {} more (PgDn)", self.scroll)
            } else {
                String::new()
            },
        ));
        for l in self.status_rows(inner, tick) {
            f.push(boxed(l));
        }
        f.push(rule('╠', '╣', ""));
        let room = inner.saturating_sub(2);
        let typed = &self.input;
        let skip = text::width(typed).saturating_sub(room);
        let tail: String = typed.chars().skip(skip).collect();
        f.push(boxed(
            Line::default()
                .add("> ", Style::fg(Color::Cyan).bold())
                .add(&tail, Style::PLAIN),
        ));
        f.push(rule('╚', '╝', ""));
        f
    }

    /// Wraps the log for `width` cells, unless it already is.
    fn wrap_log(&mut self, width: usize) {
        if self.rows_width != width {
            self.rows = self.entries.iter().flat_map(|e| styled(e, width)).collect();
            self.rows_width = width;
        }
    }

    fn status_rows(&self, inner: usize, tick: u64) -> [Line; 3] {
        let meter = |m: &Meter| {
            let pct = format!(
                " {} {:>3} %",
                text::bar(m.share, 10),
                (m.share * 100.0) as u32
            );
            let color = match m.share {
                s if s >= 0.85 => Color::Red,
                s if s >= 0.70 => Color::Yellow,
                _ => Color::Green,
            };
            let dashes = inner.saturating_sub(text::width(&m.name) + 1 + text::width(&pct));
            Line::default()
                .add(&m.name, Style::PLAIN.bold())
                .add(&format!(" {}", "─".repeat(dashes)), Style::fg(Color::Gray))
                .add(&pct, Style::fg(color))
        };
        let working = format!(
            "{} {}",
            text::spinner(tick),
            text::elapsed(self.since.elapsed().as_secs())
        );
        let second = match (&self.status.orchestrator, self.turn) {
            (Some(o), _) => meter(o),
            (None, true) => Line::plain("Awaiting your command."),
            (None, false) => Line::plain(&format!("The manager considers… {working}")),
        };
        let mut right = format!("${:.4}", self.status.spent);
        if !self.turn {
            right = format!("{working} · {right}");
        }
        if self.queued > 0 {
            right = format!(
                "{} line(s) heard at the next exchange · {right}",
                self.queued
            );
        }
        let left = match (&self.notice, &self.status.tool) {
            (Some(n), _) => Line::default().add(n, Style::fg(Color::Yellow)),
            (None, Some((tool, n))) => {
                let at =
                    Line::default().add(&format!("◈ {tool} ({n})"), Style::fg(Color::Blue).bold());
                match &self.activity {
                    Some(a) => at.add(&format!(" {a}"), Style::fg(Color::Blue)),
                    None => at,
                }
            }
            (None, None) => Line::default(),
        };
        let gap = inner.saturating_sub(left.width() + text::width(&right) + 1);
        let third = left
            .fit(inner.saturating_sub(text::width(&right) + 1))
            .add(&" ".repeat(gap + 1), Style::PLAIN)
            .add(&right, Style::fg(Color::Gray));
        [meter(&self.status.manager), second, third]
    }
}

impl Line {
    /// This line followed by `other`'s spans.
    fn join(mut self, other: Line) -> Line {
        self.spans.extend(other.spans);
        self
    }
}

/// A transcript line as screen rows of `width` cells: the speaker's tag in its colour,
/// notices grey, tool calls blue, failed tool results red; continuation rows indented.
fn styled(entry: &str, width: usize) -> Vec<Line> {
    let (tag_style, rest_style) = match entry {
        e if e.starts_with("You") => (Style::fg(Color::Cyan).bold(), Style::PLAIN),
        e if e.starts_with("Manager") => (Style::fg(Color::Yellow).bold(), Style::PLAIN),
        e if e.starts_with("Orchestrator") => (Style::fg(Color::Magenta).bold(), Style::PLAIN),
        e if e.trim_start().starts_with('◈') => (Style::fg(Color::Blue), Style::fg(Color::Blue)),
        e if e.trim_start().starts_with('✗') => (Style::fg(Color::Red), Style::fg(Color::Red)),
        _ => (Style::fg(Color::Gray), Style::fg(Color::Gray)),
    };
    let tag_len = match entry.find(": ") {
        Some(i) if tag_style.bold => i + 1,
        _ => 0,
    };
    let mut out = Vec::new();
    for (i, row) in text::wrap(entry, width).into_iter().enumerate() {
        let row = if i == 0 { row } else { format!("  {row}") };
        if i == 0 && tag_len > 0 && row.len() >= tag_len && row.is_char_boundary(tag_len) {
            let (tag, rest) = row.split_at(tag_len);
            out.push(Line::default().add(tag, tag_style).add(rest, rest_style));
        } else {
            out.push(Line::default().add(&row, rest_style));
        }
    }
    out
}

/// A second Ctrl-C while the models work: the terminal is put back, then the process
/// group gets the interrupt a cooked terminal would have sent (the git triad children
/// included); the record makes the session resumable from any instant.
fn stop_now() {
    term::restore();
    eprintln!("\ngit triad: session stopped by Ctrl-C; it is recorded: `git triad session --resume` continues it");
    // SAFETY: kill(0, …) signals our own process group, as the terminal's Ctrl-C does.
    unsafe { libc::kill(0, libc::SIGINT) };
    std::thread::sleep(Duration::from_secs(2));
    std::process::exit(crate::exit::ExitCode::INTERRUPTED);
}
