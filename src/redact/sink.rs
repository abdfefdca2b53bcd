//! The log's way out: tracing writes each event through a buffer that is redacted whole.

use std::io::Write;

use tracing_subscriber::fmt::MakeWriter;

/// A `tracing_subscriber` writer to stderr that redacts each event as one piece, so a secret
/// split over several `write` calls of the formatter is still found.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactedStderr;

/// One event's bytes, written redacted to stderr when the event is done (dropped).
#[derive(Debug, Default)]
pub struct EventBuffer(Vec<u8>);

impl Write for EventBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for EventBuffer {
    fn drop(&mut self) {
        let text = super::Redactor::global().redact_bytes(&self.0);
        // A logged value may quote a server or a model: what a terminal would obey in it is
        // shown as text (the formatter already writes an ESC of the content as `\x1b`; the
        // ones left are its colours).
        let text = String::from_utf8_lossy(&text);
        let text = crate::safe::styled(&text);
        // Nowhere to report a failure to write the log to.
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

impl<'a> MakeWriter<'a> for RedactedStderr {
    type Writer = EventBuffer;

    fn make_writer(&'a self) -> Self::Writer {
        EventBuffer::default()
    }
}
