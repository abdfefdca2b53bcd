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
        // Nowhere to report a failure to write the log to.
        let _ = std::io::stderr().lock().write_all(&text);
    }
}

impl<'a> MakeWriter<'a> for RedactedStderr {
    type Writer = EventBuffer;

    fn make_writer(&'a self) -> Self::Writer {
        EventBuffer::default()
    }
}
