//! Why a configuration could not be loaded: the error every layer's reader returns.

use std::path::PathBuf;

/// Why configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A file could not be read.
    #[error("cannot read {path}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// A file is not valid TOML.
    #[error("{path} is not valid TOML: {message}")]
    Parse {
        /// The file.
        path: String,
        /// What the parser said.
        message: String,
    },
    /// A dotted key could not be understood.
    #[error("`{0}` is not a valid config key (use dotted names like `arbiter.mode`, quote segments with dots: `models.\"gpt-4.1\".price_in`)")]
    BadKey(String),
    /// `-c` without `=`.
    #[error("`-c {0}` needs the form key=value")]
    BadOverride(String),
    /// The untrusted repo config tried to set security-sensitive keys.
    #[error("{path} sets {}, which a committed config may only set in a clone you trust", .keys.join(", "))]
    Untrusted {
        /// The repo config file.
        path: PathBuf,
        /// The offending keys.
        keys: Vec<String>,
    },
    /// The merged config does not fit the schema.
    #[error("invalid configuration: {message}")]
    Invalid {
        /// What is wrong, with the key and the layer it came from when known.
        message: String,
    },
}
