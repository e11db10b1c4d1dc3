//! A synchronous test driver for the TUI: an `App`, a sandbox on a manual clock, and the effects
//! carried out in place of the worker thread. Keys are given in the keymap notation (`<F5>`,
//! `<S-F10>`, `<C-q>`, `a`), screens are drawn with ratatui's `TestBackend` and returned as text
//! with the run-dependent figures (timings, SHA1) replaced by placeholders, so snapshots are stable.

use super::app::{App, Effect};
use super::config::Config;
use super::inputs::InputsState;
use super::inspector::InspectorCore;
use super::keymap::parse_key;
use super::theme::Theme;
use super::worker::{EngineEvent, RunResult};
use crate::engine::clock::ManualClock;
use crate::engine::keyspace::keyspace_from_json;
use crate::engine::Sandbox;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{
    Event, KeyCode, KeyEvent, KeyModifiers, MouseEvent, MouseEventKind,
};
use ratatui::Terminal;

/// The sandbox clock's start: 2023-11-14 22:13:20 UTC, fixed so TTLs render the same every time.
pub const START_US: i64 = 1_700_000_000_000_000;

pub struct Harness {
    pub app: App,
    pub sandbox: Sandbox,
    pub clock: ManualClock,
    pub theme: Theme,
    /// Every effect carried out so far, by kind ("run", "cancel", "quit",
    /// "inspect").
    pub effects: Vec<&'static str>,
    /// With a live server: runs go there (guarded) and the Server tab's requests are answered
    /// by an inspector driven in place of its thread.
    pub live: Option<crate::engine::live::LiveBackend>,
    pub inspector: Option<InspectorCore>,
    /// What copy and cut sent to the system clipboard, in order.
    pub clipboard: Vec<Vec<u8>>,
    /// The live runs' phase and cancel (no other thread here: nothing cancels them).
    pub control: crate::engine::live::guarded::RunControl,
    /// The debugger's engine, on a thread of its own (started by the first debug command).
    pub debug: Option<super::debug_engine::DebugThread>,
}

impl Harness {
    /// An app with `script` (untitled), the KEYS / ARGV fields filled in and the seed keyspace
    /// from `seed_json` (the keyspace JSON format; empty for none).
    pub fn new(script: &str, keys: &[&str], argv: &[&str], seed_json: &str) -> Harness {
        let clock = ManualClock::new(START_US);
        let mut sandbox = Sandbox::with_clock(Box::new(clock.clone()));
        sandbox.config.snapshots = true;
        let mut app = App::new(script, None, Config::default());
        let strings = |items: &[&str]| items.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        app.inputs = InputsState::from_lists(&strings(keys), &strings(argv));
        app.now_ms = sandbox.now_ms();
        app.seed_now_ms = app.now_ms;
        // Lint while typing depends on time: off unless a test turns it on (tests/tui_tests.rs).
        app.lint.enabled = false;
        if !seed_json.trim().is_empty() {
            match keyspace_from_json(seed_json, app.now_ms) {
                Ok(db) => app.seed = db,
                Err(e) => app.status = format!("seed: {e}"),
            }
        }
        Harness {
            app,
            sandbox,
            clock,
            theme: Theme::dark(),
            effects: Vec::new(),
            live: None,
            inspector: None,
            clipboard: Vec::new(),
            control: Default::default(),
            debug: None,
        }
    }

    /// Connect to a live server (two connections, as the workbench does): runs go there and the
    /// Server tab browses it. The status bar names the server with `label`, so screens are stable.
    pub fn with_live(
        mut self,
        target: crate::engine::live::Target,
        label: &str,
    ) -> Result<Harness, crate::engine::live::LiveError> {
        let live = crate::engine::live::LiveBackend::connect(target.clone())?;
        let inspector = InspectorCore::new(crate::engine::live::LiveBackend::connect(target)?);
        self.app.config.busy_threshold_ms = live.server.busy_threshold_ms;
        self.app.set_live_server(label.to_string());
        self.app.connection.role = Some(live.server.role.clone());
        self.live = Some(live);
        self.inspector = Some(inspector);
        self.settle();
        Ok(self)
    }

    /// The bundled rate-limiter sample with its KEYS, ARGV and seed (as `tui::build_app`), untitled.
    pub fn sample() -> Harness {
        Harness::new(
            include_str!("../../samples/rate_limiter.lua"),
            &["ratelimit:alice:42"],
            &["10", "60"],
            r#"{"ratelimit:alice:42": {"type": "string", "value": "3", "ttl_ms": 60000}}"#,
        )
    }

    /// Press one key in the keymap notation. Panics on a notation `parse_key` does not know, since
    /// that is a mistake in the test itself.
    pub fn press(&mut self, notation: &str) -> &mut Self {
        let key = parse_key(notation).unwrap_or_else(|| panic!("bad key notation {notation:?}"));
        self.key(key)
    }

    /// Press space-separated keys: `"<F10> <F10> <S-F10>"`.
    pub fn keys(&mut self, notations: &str) -> &mut Self {
        for notation in notations.split_whitespace() {
            self.press(notation);
        }
        self
    }

    /// Type text into the focused widget, one key per character.
    pub fn type_text(&mut self, text: &str) -> &mut Self {
        for c in text.chars() {
            let key = match c {
                '\n' => KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE),
                c => KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE),
            };
            self.key(key);
        }
        self
    }

    /// `text` typed in one burst, one key per character (`\r` and `\n` as Enter), read by the
    /// event loop as one batch: how a terminal without bracketed paste delivers a paste.
    pub fn key_burst(&mut self, text: &str) -> &mut Self {
        let events: Vec<Event> = text
            .chars()
            .map(|c| {
                let code = match c {
                    '\r' | '\n' => KeyCode::Enter,
                    c => KeyCode::Char(c),
                };
                Event::Key(KeyEvent::new(code, KeyModifiers::NONE))
            })
            .collect();
        for event in super::editing::key_by_key_paste(&self.app, events) {
            let effects = self.app.on_event(&event);
            self.apply(effects);
        }
        self.settle();
        self
    }

    /// A bracketed paste of `text` (as the terminal delivers it) through `App::on_event`.
    pub fn paste(&mut self, text: &str) -> &mut Self {
        let effects = self.app.on_event(&Event::Paste(text.to_string()));
        self.apply(effects);
        self.settle();
        self
    }

    /// A mouse event at column `x`, row `y` of the last frame drawn (`render` first).
    pub fn mouse(&mut self, kind: MouseEventKind, x: u16, y: u16) -> &mut Self {
        self.mouse_with(kind, x, y, KeyModifiers::NONE)
    }

    pub fn mouse_with(
        &mut self,
        kind: MouseEventKind,
        x: u16,
        y: u16,
        modifiers: KeyModifiers,
    ) -> &mut Self {
        let event = Event::Mouse(MouseEvent {
            kind,
            column: x,
            row: y,
            modifiers,
        });
        let effects = self.app.on_event(&event);
        self.apply(effects);
        self.settle();
        self
    }

    /// Send one key event through `App::on_event` and carry out the effects.
    pub fn key(&mut self, key: KeyEvent) -> &mut Self {
        let effects = self.app.on_event(&Event::Key(key));
        self.apply(effects);
        self.settle();
        self
    }

    /// Carry out what the app asks for after an event (the Server tab's requests), until it asks
    /// for nothing more, as the event loop does between frames.
    pub fn settle(&mut self) {
        for _ in 0..100 {
            let effects = self.app.housekeeping();
            if effects.is_empty() {
                return;
            }
            self.apply(effects);
        }
    }

    /// Carry out effects synchronously, as the worker thread would.
    pub fn apply(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            match effect {
                Effect::Run {
                    id,
                    request,
                    seed,
                    busy_threshold_ms,
                    consent,
                    live,
                    clock_ms,
                    function,
                } => {
                    self.effects.push("run");
                    self.clock.set_us(clock_ms * 1000);
                    let mut result = match self.live.as_mut().filter(|_| live) {
                        // a library's function on the live server
                        Some(backend) if function.is_some() => {
                            super::live_function::run_live_fcall(
                                backend,
                                id,
                                request,
                                &consent,
                                &self.control,
                                function.as_deref().unwrap_or_default(),
                            )
                        }
                        Some(backend) => {
                            super::worker::run_live(backend, id, request, &consent, &self.control)
                        }
                        // a library's function
                        None if function.is_some() => RunResult::fcall(
                            &mut self.sandbox,
                            id,
                            request,
                            seed,
                            busy_threshold_ms,
                            function.as_deref().unwrap_or_default(),
                        ),
                        None => {
                            RunResult::run(&mut self.sandbox, id, request, seed, busy_threshold_ms)
                        }
                    };
                    pin_timings(&mut result.report);
                    self.app
                        .on_engine_event(EngineEvent::Finished(Box::new(result)));
                }
                Effect::Inspect(request) => {
                    self.effects.push("inspect");
                    if let Some(core) = self.inspector.as_mut() {
                        let mut events = core.handle(request);
                        // The thread would scan on until the list holds what was asked for.
                        while let Some(event) = core.step() {
                            events.push(event);
                        }
                        for event in events {
                            self.app.on_inspect_event(event);
                        }
                    }
                }
                Effect::Compare(job) => {
                    // The engine thread's comparison, run here.
                    self.effects.push("compare");
                    let id = job.id;
                    let compared = EngineEvent::Compared(id, Box::new(job.run()));
                    self.app.on_engine_event(compared);
                }
                // FUNCTION LOAD's plan and send, as the engine thread would
                Effect::LiveFunction(job) => {
                    self.effects.push("live-function");
                    let answer = super::live_function::run_job(self.live.as_mut(), job);
                    self.app.on_engine_event(EngineEvent::LiveFunction(answer));
                }
                Effect::Cancel => self.effects.push("cancel"),
                Effect::Quit => self.effects.push("quit"),
                Effect::Clipboard(bytes) => {
                    self.effects.push("clipboard");
                    self.clipboard.push(bytes);
                }
                // Synchronously here (the event loop runs them on a thread).
                Effect::RunTests(job) => {
                    self.effects.push("tests");
                    job.run();
                }
                // On its thread, as in the event loop: typing goes on while it runs.
                Effect::Lint(job) => {
                    self.effects.push("lint");
                    job.spawn();
                }
                Effect::Debug(command) => {
                    self.effects.push("debug");
                    let clock = self.clock.clone();
                    let thread = self
                        .debug
                        .get_or_insert_with(|| super::debug_engine::DebugThread::start(clock));
                    thread.send(command);
                    // Wait for the engine's answer: the next stop or the end of the run.
                    let events = match thread.answer() {
                        Ok(events) => events,
                        Err(e) => panic!("{e}"),
                    };
                    for event in events {
                        let event = match event {
                            EngineEvent::Finished(mut result) => {
                                pin_timings(&mut result.report);
                                EngineEvent::Finished(result)
                            }
                            other => other,
                        };
                        self.app.on_engine_event(event);
                    }
                }
            }
        }
    }

    /// Draw the app at `width` x `height` and return the screen as text, one line per row with
    /// trailing blanks trimmed, timings and SHA1s replaced by placeholders.
    pub fn render(&self, width: u16, height: u16) -> String {
        let raw = self.render_raw(width, height);
        raw.lines()
            .map(|line| scrub(line.trim_end()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The screen as drawn, cell by cell with its style (for colours).
    pub fn render_buffer(&self, width: u16, height: u16) -> Option<ratatui::buffer::Buffer> {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).ok()?;
        terminal
            .draw(|frame| super::ui::draw(frame, &self.app, &self.theme))
            .ok()?;
        Some(terminal.backend().buffer().clone())
    }

    /// The screen exactly as drawn (no placeholders), rows separated by newlines.
    pub fn render_raw(&self, width: u16, height: u16) -> String {
        let mut terminal = match Terminal::new(TestBackend::new(width, height)) {
            Ok(t) => t,
            Err(e) => return format!("<no test terminal: {e}>"),
        };
        if let Err(e) = terminal.draw(|frame| super::ui::draw(frame, &self.app, &self.theme)) {
            return format!("<draw failed: {e}>");
        }
        let buffer = terminal.backend().buffer();
        let mut out = String::new();
        for y in 0..buffer.area.height {
            for x in 0..buffer.area.width {
                // A wide character's trailing cell is empty; skipping it keeps columns aligned.
                out.push_str(buffer[(x, y)].symbol());
            }
            out.push('\n');
        }
        out
    }
}

/// Wall-clock figures vary from run to run; fix them so the screens do not.
fn pin_timings(report: &mut crate::engine::RunReport) {
    report.elapsed_ns = 0;
    report.first_write_ns = report.first_write_ns.map(|_| 0);
    for entry in &mut report.trace {
        entry.elapsed_ns = 0;
        entry.at_ns = 0;
    }
}

/// Replace the digits of timings ("0.123 ms", "12.5µs", "0.01%", "1.5 s") by `#` and hex runs
/// of 8 or more characters (SHA1s, full or short) by `<sha>`-width `#`s.
pub fn scrub(line: &str) -> String {
    let chars: Vec<char> = line.chars().collect();
    let mut out: Vec<char> = chars.clone();
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !chars[i - 1].is_alphanumeric();
        if chars[i].is_ascii_hexdigit() && starts_word {
            let end = run_end(&chars, i, |c| c.is_ascii_hexdigit());
            let word_ends = end == chars.len() || !chars[end].is_alphanumeric();
            let run = &chars[i..end];
            let lower = run.iter().all(|c| !c.is_ascii_uppercase());
            let mixed = run.iter().any(|c| c.is_ascii_digit())
                && run.iter().any(|c| c.is_ascii_alphabetic());
            // A SHA1 may be all digits; right after a "sha" label it is one anyway.
            let labelled = chars[..i]
                .iter()
                .rev()
                .skip_while(|c| matches!(c, ' ' | ':' | '1'))
                .take(3)
                .map(|c| c.to_ascii_lowercase())
                .eq("ahs".chars());
            let is_sha = run.len() >= 8
                && run.len() <= 40
                && word_ends
                && lower
                && (mixed || labelled || run.len() == 40);
            if is_sha {
                out[i..end].fill('#');
                i = end;
                continue;
            }
        }
        if chars[i].is_ascii_digit() && starts_word {
            // A decimal number followed by a time unit or a percent sign.
            let int_end = run_end(&chars, i, |c| c.is_ascii_digit());
            if int_end < chars.len() && chars[int_end] == '.' {
                let frac_end = run_end(&chars, int_end + 1, |c| c.is_ascii_digit());
                if frac_end > int_end + 1 && has_unit(&chars[frac_end..]) {
                    for c in &mut out[i..frac_end] {
                        if c.is_ascii_digit() {
                            *c = '#';
                        }
                    }
                    i = frac_end;
                    continue;
                }
            }
            i = int_end;
            continue;
        }
        i += 1;
    }
    out.into_iter().collect()
}

fn run_end(chars: &[char], from: usize, pred: impl Fn(char) -> bool) -> usize {
    let mut end = from;
    while end < chars.len() && pred(chars[end]) {
        end += 1;
    }
    end
}

/// Whether `rest` starts with "ms", "µs", "us" or "%" (after an optional space) or " s", as a
/// whole word. A bare "59.0s" is a key's TTL, which the manual clock keeps stable.
fn has_unit(rest: &[char]) -> bool {
    let spaced = rest.first() == Some(&' ');
    let rest = if spaced { &rest[1..] } else { rest };
    let units: &[&str] = if spaced {
        &["ms", "µs", "us", "s", "%"]
    } else {
        &["ms", "µs", "us", "%"]
    };
    for unit in units {
        let unit: Vec<char> = unit.chars().collect();
        if rest.len() >= unit.len()
            && rest[..unit.len()] == unit[..]
            && rest.get(unit.len()).is_none_or(|c| !c.is_alphanumeric())
        {
            return true;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::scrub;

    #[test]
    fn scrubs_timings_and_shas() {
        assert_eq!(
            scrub("done in 0.123 ms, 3 call(s)"),
            "done in #.### ms, 3 call(s)"
        );
        assert_eq!(
            scrub(" 12.345 ms / 5000 ms (0.25%) "),
            " ##.### ms / 5000 ms (#.##%) "
        );
        assert_eq!(scrub("took 3.5µs"), "took #.#µs");
        assert_eq!(scrub("running 1.5 s"), "running #.# s");
        assert_eq!(scrub("ttl 59.0s"), "ttl 59.0s");
        assert_eq!(scrub(" sha 1a2b3c4d "), " sha ######## ");
        assert_eq!(scrub(" sha 27930594 "), " sha ######## ");
        assert_eq!(scrub("SHA1: 27930594"), "SHA1: ########");
        // Not timings: plain numbers, Lua, key names, words.
        for keep in [
            "limit % 1 ~= 0",
            "ratelimit:alice:42",
            "return {1, limit - count, ttl}",
            "2.5 apples",
            "deadbeef",
            "F10 steps",
            "(integer) 27930594",
        ] {
            assert_eq!(scrub(keep), keep);
        }
    }
}
