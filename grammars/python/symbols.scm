; Definitions in a Python file, for outlines and "which symbol does this line belong to".
;
; Contract with src/code/symbols.rs: every pattern captures the definition node as
; @definition.<kind> and its name as @name. The engine then refines what a query cannot
; say cheaply: a "function" directly in a class body becomes a "method", and a decorated
; definition's range is widened to its first decorator line.

(class_definition
  name: (identifier) @name) @definition.class

(function_definition
  name: (identifier) @name) @definition.function
