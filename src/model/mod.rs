//! The provider layer: protocol adapters, one shared transport, retries, circuit breakers,
//! budget and accounting, and the local llama.cpp servers behind the offline default.

pub mod adapter;
pub mod breaker;
pub mod budget;
pub mod cause;
pub mod client;
pub mod discover;
pub mod error;
pub mod exchange;
pub mod fanout;
pub mod local;
pub mod money;
pub mod sse;
pub mod structured;
pub mod transport;
pub mod types;
pub mod usage;
pub mod window;

pub use budget::Spend;
pub use cause::{Cause, Failure};
pub use client::{Completion, EnvLookup, ModelClient, ResolvedModel, Structured};
pub use error::ModelError;
pub use exchange::Exchange;
pub use types::{
    ChatRequest, ChatResponse, Message, OutputSchema, Speaker, ToolCall, ToolResult, ToolSpec,
    Usage,
};
