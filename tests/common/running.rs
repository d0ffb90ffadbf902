//! A child process whose standard output and error are read while it runs, so that a
//! test can wait for a line (an entry, a status, READY) instead of for a time.

use super::proc::BOUND;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// Lines read so far from one pipe, and whether it has closed.
#[derive(Default)]
struct Lines {
    text: Mutex<(Vec<String>, bool)>,
    more: Condvar,
}

/// A running child with both pipes read by threads of their own.
pub struct Running {
    child: Child,
    out: Arc<Lines>,
    err: Arc<Lines>,
    readers: Vec<JoinHandle<()>>,
}

fn reader(pipe: impl Read + Send + 'static, lines: Arc<Lines>) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut r = BufReader::new(pipe);
        loop {
            let mut l = String::new();
            let done = !matches!(r.read_line(&mut l), Ok(n) if n > 0);
            let mut t = lines.text.lock().unwrap();
            if done {
                t.1 = true;
            } else {
                t.0.push(l);
            }
            lines.more.notify_all();
            if done {
                return;
            }
        }
    })
}

impl Running {
    /// Starts `cmd` with standard output and error piped (standard input null).
    pub fn spawn(cmd: &mut Command) -> Running {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
        let (out, err) = (Arc::new(Lines::default()), Arc::new(Lines::default()));
        let readers = vec![
            reader(child.stdout.take().unwrap(), Arc::clone(&out)),
            reader(child.stderr.take().unwrap(), Arc::clone(&err)),
        ];
        Running {
            child,
            out,
            err,
            readers,
        }
    }

    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `sig` to the child.
    pub fn signal(&self, sig: i32) {
        super::proc::signal(self.pid(), sig);
    }

    /// Waits until standard error has a line (from line `from` on) for which `f` is
    /// true, and returns its index. Fails when the pipe closes first or after
    /// [`BOUND`].
    pub fn wait_stderr(&self, from: usize, what: &str, f: impl Fn(&str) -> bool) -> usize {
        wait_line(&self.err, from, what, f)
    }

    /// [`Running::wait_stderr`] for standard output.
    pub fn wait_stdout(&self, from: usize, what: &str, f: impl Fn(&str) -> bool) -> usize {
        wait_line(&self.out, from, what, f)
    }

    /// The lines of standard error read so far.
    pub fn stderr_lines(&self) -> Vec<String> {
        self.err.text.lock().unwrap().0.clone()
    }

    /// Whether the child is still running.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }

    /// Waits for the child to end (within [`BOUND`], else it is killed and the test
    /// fails) and returns its status and everything it wrote.
    pub fn finish(mut self) -> Output {
        let status: ExitStatus = match wait_until_exit(&mut self.child) {
            Some(s) => s,
            None => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                panic!("still running after {BOUND:?}");
            }
        };
        for r in self.readers.drain(..) {
            r.join().unwrap();
        }
        let take = |l: &Lines| l.text.lock().unwrap().0.concat().into_bytes();
        Output {
            status,
            stdout: take(&self.out),
            stderr: take(&self.err),
        }
    }
}

fn wait_until_exit(child: &mut Child) -> Option<ExitStatus> {
    super::proc::wait_for(BOUND, || child.try_wait().unwrap())
}

fn wait_line(lines: &Lines, from: usize, what: &str, f: impl Fn(&str) -> bool) -> usize {
    let end = std::time::Instant::now() + BOUND;
    let mut t = lines.text.lock().unwrap();
    let mut seen = from;
    loop {
        if let Some(i) = t.0.iter().skip(seen).position(|l| f(l.trim_end())) {
            return seen + i;
        }
        seen = seen.max(t.0.len());
        assert!(!t.1, "the pipe closed before {what}: {:?}", t.0);
        let left = end.saturating_duration_since(std::time::Instant::now());
        assert!(!left.is_zero(), "waited {BOUND:?} for {what}: {:?}", t.0);
        t = lines.more.wait_timeout(t, left).unwrap().0;
    }
}

impl Drop for Running {
    /// A test that fails half-way leaves no child behind.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}
