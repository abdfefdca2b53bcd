; Definitions in a Rust file, for outlines and "which symbol does this line belong to".
;
; Contract with src/code/symbols.rs: every pattern captures the definition node as
; @definition.<kind> and a name node as @name. For `impl` the name is the implemented
; type; the engine prefixes the trait (`Display for Foo`) from the node's `trait` field,
; and widens every range to the outer attributes (`#[derive]`, `#[test]`) right above it,
; the Rust counterpart of Python decorators.

(function_item
  name: (identifier) @name) @definition.fn

; Trait method declarations without a body and functions in `extern` blocks.
(function_signature_item
  name: (identifier) @name) @definition.fn

(impl_item
  type: (_) @name) @definition.impl

(trait_item
  name: (type_identifier) @name) @definition.trait

(mod_item
  name: (identifier) @name) @definition.mod

(struct_item
  name: (type_identifier) @name) @definition.struct

(enum_item
  name: (type_identifier) @name) @definition.enum

(macro_definition
  name: (identifier) @name) @definition.macro_rules
