; Import statements anywhere in a Python file (module level, inside try/except,
; `if TYPE_CHECKING:`, function bodies). Contract with src/code/imports.rs: each match
; captures one whole statement as @import; the engine reads its fields (module_name,
; name, relative_import, wildcard_import) itself, because one statement can import
; several modules (`import a, b`).

(import_statement) @import

(import_from_statement) @import

(future_import_statement) @import
