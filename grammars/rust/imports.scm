; Imports in a Rust file: `use` declarations anywhere (module level, inline modules,
; function bodies) and `extern crate`. Contract with src/code/imports.rs: each match
; captures one whole declaration as @import; the engine flattens use trees
; (`use a::{b, c::{d as e}, self}`) into one import per leaf path itself.

(use_declaration) @import

(extern_crate_declaration) @import
