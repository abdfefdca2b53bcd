//! The live run view: while `git triad run` works on a terminal, a few lines at the bottom
//! of stderr show every stage (model, attempt, verdict), what is happening now and for how
//! long, and the tokens and cost so far; above them, the run's story piles up as the plain
//! renderer would print it (`triad: …`), so the scrollback keeps everything. Nothing takes
//! over the screen: when the run ends, its last frame stays where it is.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::term;
use super::text::{self, Color, Line, Style};
use crate::arbiter::Verdict;
use crate::model::{ModelClient, Spend};
use crate::pipeline::{Observer, Progress, RunState, Stage};

/// One stage (or the reconciliation) as a row.
#[derive(Debug, Clone)]
struct Row {
    name: String,
    model: String,
    attempt: Option<(u32, u32)>,
    verdict: Option<Verdict>,
    arbiter: Option<String>,
    /// Accepted (a commit exists, reviewed or not).
    done: bool,
    /// What the row's model is doing, since when.
    doing: Option<(String, Instant)>,
    /// The last thing worth knowing ("attempt 1 EDITS_FAILED").
    note: String,
}

/// Everything the view shows, shared between the pipeline's thread and the drawing one.
struct View {
    title: String,
    rows: Vec<Row>,
    /// What happens outside any row (verify, consensus, the chamber), since when.
    activity: Option<(String, Instant)>,
    /// Lines to keep above the live ones, not yet printed.
    story: Vec<String>,
    /// The run's spend before this process.
    before: Spend,
    budget: Option<f64>,
    started: Instant,
    ended: bool,
}

impl View {
    fn new(state: &RunState) -> View {
        let rows = state
            .stages()
            .iter()
            .map(|s| Row {
                name: s.stage.as_str().into(),
                model: s.models.get(s.model_index).cloned().unwrap_or_default(),
                attempt: None,
                verdict: s.verdict,
                arbiter: s.arbiter_model.clone(),
                done: s.commit.is_some(),
                doing: None,
                note: String::new(),
            })
            .collect();
        View {
            title: format!(
                "run {} · task {} · arbiter {}",
                state.run_id(),
                state.task(),
                format!("{:?}", state.mode()).to_lowercase()
            ),
            rows,
            activity: None,
            story: Vec::new(),
            before: state.spend(),
            budget: state.budget_usd(),
            started: Instant::now(),
            ended: false,
        }
    }

    /// Everything from stage `to` on is built again, `to` by `model`, noted `why`.
    fn again_from(&mut self, to: Stage, model: &str, why: &str) {
        if let Some(at) = self.rows.iter().position(|r| r.name == to.as_str()) {
            for r in &mut self.rows[at..] {
                r.done = false;
                r.verdict = None;
            }
        }
        let r = self.row(to.as_str());
        r.model = model.into();
        r.note = why.into();
    }

    fn row(&mut self, name: &str) -> &mut Row {
        if let Some(i) = self.rows.iter().position(|r| r.name == name) {
            return &mut self.rows[i];
        }
        self.rows.push(Row {
            name: name.into(),
            model: String::new(),
            attempt: None,
            verdict: None,
            arbiter: None,
            done: false,
            doing: None,
            note: String::new(),
        });
        self.rows.last_mut().expect("just pushed")
    }

    fn apply(&mut self, event: &Progress<'_>) {
        let now = Instant::now();
        match *event {
            Progress::StageStarted {
                stage,
                model,
                attempt,
                ..
            } => {
                // Stages run in order: the ones before this one were accepted.
                for r in &mut self.rows {
                    if r.name == stage.as_str() {
                        break;
                    }
                    if r.attempt.is_some() && r.verdict != Some(Verdict::Halt) {
                        r.done = true;
                        r.doing = None;
                    }
                }
                let r = self.row(stage.as_str());
                r.model = model.into();
                r.attempt = Some(attempt);
                r.done = false;
                r.doing = Some(("answering".into(), now));
            }
            Progress::Answered { stage, .. } => {
                self.row(stage.as_str()).doing = Some(("checking the answer".into(), now))
            }
            Progress::AttemptRefused {
                stage, n, result, ..
            } => {
                let r = self.row(stage.as_str());
                r.doing = None;
                r.note = format!("attempt {n} {}", result.as_str());
            }
            Progress::ReviewStarted { stage, arbiter } => {
                self.row(stage.as_str()).doing = Some((format!("review by {arbiter}"), now))
            }
            Progress::Reviewed { stage, review } => {
                let r = self.row(stage.as_str());
                r.doing = None;
                r.verdict = Some(review.verdict);
                r.arbiter = Some(review.arbiter_model.clone());
                r.done = matches!(review.verdict, Verdict::Approve | Verdict::Flag);
                r.note = String::new();
            }
            Progress::Reassigned { from, to, model } => {
                let from_row = self.row(from.as_str());
                from_row.doing = None;
                from_row.note = format!("gave its work to {to}");
                self.again_from(to, model, &format!("took over from {from}"));
            }
            Progress::Rewound { to, model } => self.again_from(to, model, "rewound"),
            Progress::Dropped { stage, .. } => {
                let r = self.row(stage.as_str());
                r.doing = None;
                r.done = true;
                r.note = "dropped: back to the best evidenced commit".into();
            }
            Progress::Economized { stage, to, .. } => {
                let r = self.row(stage.as_str());
                r.model = to.into();
                r.note = "cheaper model: budget".into();
            }
            Progress::ReconcileStarted { model } => {
                let r = self.row("reconcile");
                r.model = model.unwrap_or("(no model)").into();
                r.doing = Some(("checking the result against the TaskSpec".into(), now));
            }
            Progress::Reconciled { verdict, .. } => {
                let r = self.row("reconcile");
                r.doing = None;
                r.verdict = Some(verdict);
                // A REJECT sends the run back; only APPROVE or FLAG is a reconciled result.
                r.done = matches!(verdict, Verdict::Approve | Verdict::Flag);
            }
            Progress::VerifyStarted { command, .. } => {
                self.activity = Some((format!("verify: `{command}`"), now))
            }
            Progress::ConsensusStarted { voters, .. } => {
                self.activity = Some((format!("consensus: {} vote", voters.join(", ")), now))
            }
            Progress::Deliberated { who, what } => {
                self.activity = Some((format!("consensus: {who} {what}"), now))
            }
            Progress::Explored { who, what } => {
                self.activity = Some((format!("parallel: {who} {what}"), now))
            }
            Progress::Debated { who, what } => {
                self.activity = Some((format!("debate: {who} {what}"), now))
            }
            Progress::Chamber { stage, line } => {
                self.activity = Some((format!("chamber ({stage}): {line}"), now))
            }
            Progress::VerifyFinished { .. }
            | Progress::VerifySkipped { .. }
            | Progress::StageSkipped { .. }
            | Progress::ConsensusDecided { .. }
            | Progress::ReconcileRewind { .. }
            | Progress::Formatted { .. }
            | Progress::Superseded { .. } => self.activity = None,
            Progress::Ended { state } => {
                self.ended = true;
                self.activity = None;
                for r in &mut self.rows {
                    r.doing = None;
                    // The record decides what was accepted.
                    if let Some(s) = state.stages().iter().find(|s| s.stage.as_str() == r.name) {
                        r.done = s.commit.is_some() && s.verdict != Some(Verdict::Halt);
                        r.verdict = s.verdict.or(r.verdict);
                    }
                }
            }
        }
        // What is being started shows live; what concluded is kept above.
        let live = matches!(
            event,
            Progress::StageStarted { .. }
                | Progress::ReviewStarted { .. }
                | Progress::VerifyStarted { .. }
                | Progress::ReconcileStarted { .. }
                | Progress::ConsensusStarted { .. }
        );
        if let Some(line) = crate::report::progress::line(event).filter(|_| !live) {
            self.story.push(format!("triad: {line}"));
        }
    }

    /// The live lines: a title with the spinner and the elapsed time, a row per stage,
    /// what happens now, the tokens and the cost.
    fn lines(&self, spent: Spend, tick: u64) -> Vec<Line> {
        let gray = Style::fg(Color::Gray);
        let clock = if self.ended {
            format!(
                "done in {}",
                text::elapsed(self.started.elapsed().as_secs())
            )
        } else {
            format!(
                "{} {}",
                text::spinner(tick),
                text::elapsed(self.started.elapsed().as_secs())
            )
        };
        let mut out = vec![Line::default()
            .add(&self.title, Style::PLAIN.bold())
            .add(&format!("  {clock}"), gray)];
        let name_w = self.rows.iter().map(|r| r.name.len()).max().unwrap_or(0);
        let model_w = self
            .rows
            .iter()
            .map(|r| text::width(&r.model))
            .max()
            .unwrap_or(0);
        for r in &self.rows {
            let (mark, style) = match (&r.doing, r.verdict, r.done) {
                (Some(_), _, _) => (text::spinner(tick), Style::fg(Color::Cyan).bold()),
                (None, Some(Verdict::Halt), _) => ("✗", Style::fg(Color::Red).bold()),
                (None, Some(Verdict::Flag), true) => ("!", Style::fg(Color::Yellow).bold()),
                (None, _, true) => ("✓", Style::fg(Color::Green).bold()),
                (None, Some(Verdict::Reject), false) => ("↻", Style::fg(Color::Yellow)),
                _ if !r.note.is_empty() => ("↻", Style::fg(Color::Yellow)),
                _ => ("·", gray),
            };
            let mut line = Line::default()
                .add(&format!("  {mark} "), style)
                .add(&format!("{:name_w$}  ", r.name), Style::PLAIN)
                .add(
                    &format!(
                        "{}{}",
                        r.model,
                        " ".repeat(model_w.saturating_sub(text::width(&r.model)))
                    ),
                    gray,
                );
            if let Some((n, max)) = r.attempt {
                line = line.add(&format!("  attempt {n} of {max}"), gray);
            }
            if let Some(v) = r.verdict {
                let by = r
                    .arbiter
                    .as_deref()
                    .map_or(String::new(), |a| format!(" by {a}"));
                line = line
                    .add("  ", Style::PLAIN)
                    .add(v.as_str(), verdict_style(v))
                    .add(&by, gray);
            }
            match &r.doing {
                Some((what, since)) => {
                    line = line.add(
                        &format!("  {what} {}", text::elapsed(since.elapsed().as_secs())),
                        Style::fg(Color::Cyan),
                    )
                }
                None if !r.note.is_empty() => {
                    line = line.add(&format!("  ({})", r.note), Style::fg(Color::Yellow))
                }
                None => {}
            }
            out.push(line);
        }
        if let Some((what, since)) = &self.activity {
            out.push(Line::default().add(
                &format!(
                    "  {} {what} ({})",
                    text::spinner(tick),
                    text::elapsed(since.elapsed().as_secs())
                ),
                Style::fg(Color::Cyan),
            ));
        }
        let budget = self
            .budget
            .map_or(String::new(), |b| format!(" of the ${b:.2} budget"));
        out.push(Line::default().add(
            &format!(
                "  {} tokens · ${:.4}{budget}",
                spent.tokens(),
                spent.cost_usd
            ),
            gray,
        ));
        out
    }
}

fn verdict_style(v: Verdict) -> Style {
    match v {
        Verdict::Approve => Style::fg(Color::Green).bold(),
        Verdict::Flag => Style::fg(Color::Yellow).bold(),
        Verdict::Reject => Style::fg(Color::Red),
        Verdict::Halt => Style::fg(Color::Red).bold(),
    }
}

/// The observer the pipeline reports to: it updates the view and wakes the painter.
struct Live {
    view: Arc<Mutex<View>>,
    wake: mpsc::Sender<bool>,
}

impl Observer for Live {
    fn progress(&self, event: &Progress<'_>) {
        self.view
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .apply(event);
        let _ = self.wake.send(false);
    }
}

/// Draws the live lines on `fd`, remembering how many there are to draw over them.
struct Painter {
    height: usize,
    last: String,
}

impl Painter {
    fn paint(&mut self, fd: i32, view: &Mutex<View>, client: &ModelClient, tick: u64) {
        let (story, lines) = {
            let mut v = view.lock().unwrap_or_else(|e| e.into_inner());
            let now = client.usage();
            let spent = Spend {
                cost_usd: v.before.cost_usd + client.spent_usd(),
                input_tokens: v.before.input_tokens + now.input_tokens,
                output_tokens: v.before.output_tokens + now.output_tokens,
                latency_ms: v.before.latency_ms,
            };
            (std::mem::take(&mut v.story), v.lines(spent, tick))
        };
        let width = term::size(fd).map_or(80, |(w, _)| w).saturating_sub(1);
        let frame: String = lines
            .iter()
            .map(|l| format!("{}\n", l.ansi(width)))
            .collect();
        if story.is_empty() && frame == self.last {
            return;
        }
        let mut out = String::new();
        if self.height > 0 {
            out.push_str(&format!("\r\x1b[{}A", self.height));
        }
        out.push_str("\x1b[J");
        for l in story {
            out.push_str(&format!("{}\n", text::clean(&crate::redact::redact(&l))));
        }
        out.push_str(&frame);
        term::write_all(fd, out.as_bytes());
        self.height = lines.len();
        self.last = frame;
    }
}

/// Runs `body` with the live view on stderr: `body` gets the observer to hand the pipeline.
/// Stderr is captured meanwhile (its lines join the story above the live lines) and given
/// back before this returns, the last frame left on the screen.
pub fn watch<T>(
    client: &ModelClient,
    state: &RunState,
    body: impl FnOnce(&dyn Observer) -> T,
) -> T {
    let view = Arc::new(Mutex::new(View::new(state)));
    let (wake, woken) = mpsc::channel::<bool>();
    let story = (Arc::clone(&view), wake.clone());
    let captured = term::capture_stderr(move |line| {
        story
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .story
            .push(text::uncolored(&line));
        story.1.send(false).is_ok()
    });
    // Without a pipe, the view draws on stderr itself (a stray line may tear a frame).
    let (fd, reader) = match captured {
        Ok((fd, reader)) => (fd, Some(reader)),
        Err(_) => (2, None),
    };
    let live = Live {
        view: Arc::clone(&view),
        wake: wake.clone(),
    };
    let start = Instant::now();
    let tick = || start.elapsed().as_millis() as u64 / 125;
    std::thread::scope(|scope| {
        let shared = Arc::clone(&view);
        let painter = scope.spawn(move || {
            let mut p = Painter {
                height: 0,
                last: String::new(),
            };
            loop {
                match woken.recv_timeout(Duration::from_millis(250)) {
                    Ok(true) | Err(RecvTimeoutError::Disconnected) => return p,
                    Ok(false) | Err(RecvTimeoutError::Timeout) => {
                        p.paint(fd, &shared, client, tick())
                    }
                }
            }
        });
        let result = body(&live);
        let _ = wake.send(true);
        let mut painter = painter.join().unwrap_or(Painter {
            height: 0,
            last: String::new(),
        });
        // Stderr back, then what was still in the pipe, then the last frame.
        term::restore();
        let waited = Instant::now();
        while reader.as_ref().is_some_and(|r| !r.is_finished())
            && waited.elapsed() < Duration::from_millis(300)
        {
            std::thread::sleep(Duration::from_millis(10));
        }
        view.lock().unwrap_or_else(|e| e.into_inner()).ended = true;
        painter.last.clear();
        painter.paint(2, &view, client, tick());
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::Stage;

    fn view() -> View {
        View {
            title: "run".into(),
            rows: Vec::new(),
            activity: None,
            story: Vec::new(),
            before: Spend::default(),
            budget: None,
            started: Instant::now(),
            ended: false,
        }
    }

    fn shown(v: &View) -> Vec<String> {
        v.lines(Spend::default(), 0)
            .iter()
            .map(Line::text)
            .collect()
    }

    #[test]
    fn marks_follow_what_the_run_decided() {
        let mut v = view();
        let start = |stage, position| Progress::StageStarted {
            stage,
            position: (position, 4),
            model: "m",
            attempt: (1, 3),
        };
        v.apply(&start(Stage::Implement, 1));
        v.apply(&start(Stage::Refactor, 2));
        v.apply(&Progress::ReconcileStarted { model: Some("r") });
        v.apply(&Progress::Reconciled {
            model: "r",
            verdict: Verdict::Reject,
            raised: None,
        });
        let text = shown(&v);
        // An unreviewed stage is accepted once the next one starts.
        assert!(
            text.iter().any(|l| l.starts_with("  ✓ implement")),
            "{text:#?}"
        );
        // A reconciliation REJECT sends the run back: never a tick.
        assert!(
            text.iter()
                .any(|l| l.starts_with("  ↻ reconcile") && l.contains("REJECT")),
            "{text:#?}"
        );
        assert!(v.story.iter().any(|l| l.contains("[reconcile] r: REJECT")));
    }
}
