//! The debugger's costs, as ratios measured in the same run (`cargo bench --bench debugger`):
//! - a 1e6-iteration pure-Lua loop under a debug session with a breakpoint set but never hit,
//!   against the plain run (target <= 2x; the breakpoint is a probe, the line hook is off);
//! - the answer to a step on a 5,000-line script: from the resume to the next stop, with the stack
//!   and the variables read at the stop (target <= 16 ms);
//! - a reverse step at the end of a run of 1,000,000 line events: the replay to the previous event
//!   (target <= 200 ms). The loop there makes two line events per iteration (2,000,003 in all).

use evalbench::engine::debug::{DebugFrontend, DebugSession, NoStops, Resume, Stop};
use evalbench::engine::{RunRequest, Sandbox};
use std::time::{Duration, Instant};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const LOOP: &str = "local sum = 0
for i = 1, 1000000 do
  local x = i * 2
  if x < 0 then
    sum = sum - 1
  end
  sum = sum + x % 7
end
return sum";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn loop_ratio() {
    let mut sandbox = Sandbox::new();
    sandbox.config.busy_threshold_ms = 0;
    let request = RunRequest::new(LOOP);
    let plain = median(
        (0..7)
            .map(|_| {
                let t = Instant::now();
                sandbox.run(&request);
                t.elapsed()
            })
            .collect(),
    );
    let mut session = DebugSession::new(LOOP.as_bytes()).unwrap();
    session.stop_at_start = false;
    session.add_breakpoint(5, None, None).unwrap();
    let debugged = median(
        (0..7)
            .map(|_| {
                let t = Instant::now();
                sandbox.debug(&request, &mut session, &mut NoStops);
                t.elapsed()
            })
            .collect(),
    );
    println!(
        "1e6-iteration loop: plain {:.1} ms, breakpoint set not hit {:.1} ms: ratio {:.2} (target <= 2)",
        plain.as_secs_f64() * 1e3,
        debugged.as_secs_f64() * 1e3,
        debugged.as_secs_f64() / plain.as_secs_f64()
    );
}

/// Steps N times, timing each answer (resume -> next stop, stack and variables read).
struct Stepper {
    /// The line event of the first stop.
    event: u64,
    left: usize,
    resumed: Option<Instant>,
    answers: Vec<Duration>,
    back_at_end: bool,
}

impl DebugFrontend for Stepper {
    fn stopped(&mut self, stop: &mut Stop<'_>) -> Resume {
        std::hint::black_box((stop.stack(), stop.variables(0).ok()));
        if self.event == 0 {
            self.event = stop.event();
        }
        if let Some(t) = self.resumed.take() {
            self.answers.push(t.elapsed());
        }
        if self.left == 0 {
            return Resume::Continue;
        }
        self.left -= 1;
        self.resumed = Some(Instant::now());
        if self.back_at_end {
            Resume::StepBack
        } else {
            Resume::StepInto
        }
    }
}

fn step_on_a_long_script() {
    let script: String = "local t = {}\n".to_string()
        + &(2..=5000)
            .map(|i| format!("t[{}] = {i}\n", i % 150))
            .collect::<String>()
        + "return #t";
    let mut sandbox = Sandbox::new();
    let mut session = DebugSession::new(script.as_bytes()).unwrap();
    session.stop_at_start = false;
    session.add_breakpoint(4900, None, None).unwrap();
    let mut f = Stepper {
        event: 0,
        left: 50,
        resumed: None,
        answers: Vec::new(),
        back_at_end: false,
    };
    sandbox.debug(&RunRequest::new(script.as_str()), &mut session, &mut f);
    let step = median(f.answers);
    let mut f = Stepper {
        event: 0,
        left: 5,
        resumed: None,
        answers: Vec::new(),
        back_at_end: true,
    };
    sandbox.debug(&RunRequest::new(script.as_str()), &mut session, &mut f);
    let back = median(f.answers);
    println!(
        "5,000-line script: a step answers in {:.3} ms, a step back in {:.3} ms (target <= 16 ms)",
        step.as_secs_f64() * 1e3,
        back.as_secs_f64() * 1e3
    );
}

fn reverse_step_on_a_million_events() {
    let script = "local sum = 0\nfor i = 1, 1000000 do\n  sum = sum + i\nend\nreturn sum";
    let mut sandbox = Sandbox::new();
    sandbox.config.busy_threshold_ms = 0;
    let mut session = DebugSession::new(script.as_bytes()).unwrap();
    session.stop_at_start = false;
    session.add_breakpoint(5, None, None).unwrap();
    let mut f = Stepper {
        event: 0,
        left: 5,
        resumed: None,
        answers: Vec::new(),
        back_at_end: true,
    };
    sandbox.debug(&RunRequest::new(script), &mut session, &mut f);
    let plain = {
        let t = Instant::now();
        sandbox.run(&RunRequest::new(script));
        t.elapsed()
    };
    println!(
        "reverse step after {} line events: {:.1} ms (target <= 200 ms); the plain run takes {:.1} ms",
        f.event,
        median(f.answers).as_secs_f64() * 1e3,
        plain.as_secs_f64() * 1e3
    );
}

fn main() {
    loop_ratio();
    step_on_a_long_script();
    reverse_step_on_a_million_events();
}
