//! Where a command's words go when it runs for a session's tool in this process rather
//! than for a person: what it prints and says is kept for the tool's answer, and each line
//! it says is heard as it comes (a session's screen shows a run's stages). Per thread, so
//! the session's own output, on its own threads, is untouched.

use std::cell::RefCell;

use crate::session::product::Heard;

/// The words of the command running on this thread.
struct Capture {
    out: String,
    said: String,
    heard: Heard,
}

thread_local! {
    static CAPTURE: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

/// Ends the capture of this thread however the command ends (a panic included), so a
/// pooled thread never keeps another command's words.
struct Ending;

impl Drop for Ending {
    fn drop(&mut self) {
        CAPTURE.with(|c| c.borrow_mut().take());
    }
}

/// Runs `f` with what it prints and says kept, each line said also passed to `heard`;
/// returns its result, what it printed (stdout) and what it said (stderr).
pub fn during<T>(heard: Heard, f: impl FnOnce() -> T) -> (T, String, String) {
    CAPTURE.with(|c| {
        *c.borrow_mut() = Some(Capture {
            out: String::new(),
            said: String::new(),
            heard,
        })
    });
    let ending = Ending;
    let result = f();
    let kept = CAPTURE.with(|c| c.borrow_mut().take());
    drop(ending);
    let (out, said) = kept.map_or_else(Default::default, |k| (k.out, k.said));
    (result, out, said)
}

/// Keeps `text` printed on stdout, if this thread's words are kept; says whether they are.
pub fn out(text: &str) -> bool {
    CAPTURE.with(|c| match c.borrow_mut().as_mut() {
        Some(k) => {
            k.out.push_str(text);
            true
        }
        None => false,
    })
}

/// Keeps `text` said on stderr and passes each of its lines to the listener, if this
/// thread's words are kept; says whether they are.
pub fn said(text: &str) -> bool {
    let heard = CAPTURE.with(|c| {
        c.borrow_mut().as_mut().map(|k| {
            k.said.push_str(text);
            k.heard.clone()
        })
    });
    // Called outside the borrow: a listener that says something itself is kept too.
    match heard {
        Some(heard) => {
            for line in text.lines() {
                heard(line);
            }
            true
        }
        None => false,
    }
}
