//! The code evidence engine against real fixture repositories: every import form, the
//! layouts real projects use (which must produce zero findings), symbol ranges, and
//! syntax errors a change introduces. Each evidence scenario runs twice, over a plain
//! directory (`DirSource`) and over a real git commit (`GitTreeSource`), and both must
//! agree.

use std::path::Path;

use git_triad::code::{
    self, evidence, evidence_with, ChangedFile, DirSource, EvidenceOptions, FileSource, Finding,
    GitTreeSource, Lang, Symbol,
};

use crate::common::TestEnv;

/// A file of a change: `Some(text)` written, `None` deleted.
type Edit<'a> = (&'a str, Option<&'a str>);

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

fn changes(base: &[(&str, &str)], edits: &[Edit]) -> Vec<ChangedFile> {
    edits
        .iter()
        .map(|(path, after)| ChangedFile {
            path: path.to_string(),
            before: base
                .iter()
                .find(|(p, _)| p == path)
                .map(|(_, t)| t.to_string()),
            after: after.map(str::to_string),
        })
        .collect()
}

/// Evidence for `edits` on top of `base`, over a directory and over a git commit of the
/// result; asserts both agree and returns the findings.
fn both(base: &[(&str, &str)], edits: &[Edit]) -> Vec<Finding> {
    let env = TestEnv::new();
    let change = changes(base, edits);

    let plain = env.root().join("plain");
    for (p, t) in base {
        write(&plain, p, t);
    }
    for (p, t) in edits {
        match t {
            Some(t) => write(&plain, p, t),
            None => std::fs::remove_file(plain.join(p)).expect("rm"),
        }
    }
    let from_dir = evidence(&DirSource::new(&plain), &change);

    let repo_dir = env.repo("repo", base);
    for (p, t) in edits {
        match t {
            Some(t) => write(&repo_dir, p, t),
            None => std::fs::remove_file(repo_dir.join(p)).expect("rm"),
        }
    }
    env.commit_all(&repo_dir, "change");
    let repo = git2::Repository::open(&repo_dir).expect("open repo");
    let head = repo
        .head()
        .and_then(|h| h.peel_to_tree())
        .expect("head tree");
    let from_git = evidence(&GitTreeSource::new(&repo, head), &change);

    assert_eq!(from_dir, from_git, "DirSource and GitTreeSource disagree");
    from_dir
}

/// Asserts there are no findings, printing them otherwise.
#[track_caller]
fn none(findings: &[Finding]) {
    assert!(
        findings.is_empty(),
        "expected no findings, got:\n{}",
        serde_json::to_string_pretty(findings).unwrap_or_default()
    );
}

/// The (kind, line, import text) of each finding.
fn brief(findings: &[Finding]) -> Vec<(String, u32, String)> {
    findings
        .iter()
        .map(|f| (f.kind.clone(), f.line, f.import.clone().unwrap_or_default()))
        .collect()
}

/// The [`brief`] of an `unresolved_import` finding.
fn unresolved(line: u32, import: &str) -> (String, u32, String) {
    ("unresolved_import".into(), line, import.into())
}

/// The [`brief`] of an `optional_import` finding.
fn optional(line: u32, import: &str) -> (String, u32, String) {
    ("optional_import".into(), line, import.into())
}

/// Asserts the finding's reason mentions `part`.
#[track_caller]
fn assert_reason(finding: &Finding, part: &str) {
    assert!(
        finding.reason.contains(part),
        "reason lacks {part:?}: {}",
        finding.reason
    );
}

/// Asserts the one finding is `import` at `line`, unresolved, for a reason mentioning `part`.
#[track_caller]
fn assert_only_unresolved(findings: &[Finding], line: u32, import: &str, part: &str) {
    assert_eq!(
        brief(findings),
        vec![unresolved(line, import)],
        "{findings:#?}"
    );
    assert_reason(&findings[0], part);
}

// ---------------------------------------------------------------- Python imports

const PY_BASE: &[(&str, &str)] = &[
    (
        "pyproject.toml",
        "[project]\nname = \"demo\"\ndependencies = [\"requests>=2\"]\n",
    ),
    ("pkg/__init__.py", ""),
    ("pkg/x.py", "def helper():\n    return 1\n"),
    ("pkg/sub/__init__.py", ""),
    ("pkg/sub/leaf.py", "LEAF = 1\n"),
];

#[test]
fn python_every_import_form_resolves_or_is_reported() {
    let src = "\
from __future__ import annotations
import os.path as osp
import json, re
from .x import helper
from . import sub
from .sub import leaf
from .sub.leaf import LEAF
from requests import *
import pkg.sub.leaf
import requests.adapters as ra
from .. import nothing
from .missing import y
import requets
import pkg.nosuch
from . import ghost
from pkg import defined_in_init
from pkg.sub import also_in_init


def use():
    return helper()
";
    let f = both(PY_BASE, &[("pkg/a.py", Some(src))]);
    assert_eq!(
        brief(&f),
        vec![
            unresolved(11, "from .. import nothing"),
            unresolved(12, "from .missing import y"),
            unresolved(13, "import requets"),
            unresolved(14, "import pkg.nosuch"),
        ],
        "{f:#?}"
    );
    // `from . import ghost` resolves: pkg/__init__.py could define `ghost`.
    for finding in &f {
        assert_eq!(finding.category, "hallucination");
        assert_eq!(finding.severity, "critical");
        assert_eq!(finding.path, "pkg/a.py");
        assert_eq!(finding.end_line, finding.line);
        assert!(finding.symbol.is_none());
    }
    assert_reason(&f[0], "beyond the top-level package");
    assert_reason(&f[1], "pkg/missing.py");
    assert_eq!(
        f[2].reason,
        "no module `requets` in the standard library, the repository, or the declared \
         dependencies (pyproject.toml)"
    );
    assert_reason(&f[3], "no module `nosuch`");
}

#[test]
fn python_relative_names_need_a_submodule_without_init() {
    let base = &[("nsdir/inner.py", "X = 1\n")];
    let src = "from . import inner\nfrom . import ghost\n";
    let f = both(base, &[("nsdir/mod.py", Some(src))]);
    assert_only_unresolved(&f, 2, "from . import ghost", "no `__init__.py`");
}

#[test]
fn python_only_added_imports_are_judged() {
    let before = "import requets\n\n\ndef f():\n    return 1\n";
    let after = "import requets\nimport numpyy\n\n\ndef f():\n    import pandaz\n    return 1\n";
    let base = &[("tool.py", before)];
    let f = both(base, &[("tool.py", Some(after))]);
    assert_eq!(
        brief(&f),
        vec![
            unresolved(2, "import numpyy"),
            unresolved(6, "import pandaz")
        ]
    );
    assert_eq!(f[1].symbol.as_ref().map(|s| s.name.as_str()), Some("f"));
    assert_reason(&f[0], "no dependency manifest found");
}

#[test]
fn python_src_layout_has_zero_false_positives() {
    let base: &[(&str, &str)] = &[
        (
            "pyproject.toml",
            "[build-system]\nrequires = [\"setuptools>=61\"]\n\n[project]\nname = \"my-pkg\"\n\
             dependencies = [\"requests>=2\", \"PyYAML\", \"python-dateutil\", \"Pillow\"]\n\n\
             [project.optional-dependencies]\ndev = [\"pytest>=7\", \"scikit-learn\"]\n\n\
             [tool.setuptools_scm]\nversion_file = \"src/my_pkg/_version.py\"\n",
        ),
        ("src/my_pkg/__init__.py", "from ._version import version\n"),
        ("src/my_pkg/core.py", "def run():\n    return 1\n"),
        ("src/my_pkg/util/helpers.py", "def h():\n    return 2\n"),
        ("src/my_pkg/ext.cpython-311-x86_64-linux-gnu.so", "\0"),
        ("tests/conftest.py", ""),
        ("tests/helpers.py", "def fixture_data():\n    return {}\n"),
        ("scripts/common.py", "X = 1\n"),
    ];
    let api = "\
import yaml
import dateutil.parser
from PIL import Image
import requests
from my_pkg.core import run
from my_pkg import core, util
from my_pkg.util import helpers
from . import core as core2
from .util.helpers import h
from .ext import fast
from ._version import version
from setuptools import setup
import pkg_resources

try:
    from typing import TYPE_CHECKING
except ImportError:
    TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
";
    let test = "\
import pytest
import sklearn
import my_pkg
from my_pkg.core import run
import helpers
from conftest import *
";
    let script =
        "import common\nimport tomllib\nimport distutils\nimport asyncore\nimport _thread\n";
    let f = both(
        base,
        &[
            ("src/my_pkg/api.py", Some(api)),
            ("tests/test_core.py", Some(test)),
            ("scripts/run.py", Some(script)),
        ],
    );
    none(&f);
}

#[test]
fn python_namespace_package_resolves() {
    let base: &[(&str, &str)] = &[
        ("company/billing/invoice.py", "def total():\n    return 0\n"),
        ("company/billing/py.typed", ""),
        ("company/billing/stubs.pyi", "def stub() -> int: ...\n"),
    ];
    let ok = "import company.billing.invoice\nfrom company.billing import invoice, stubs\nfrom company import billing\n";
    none(&both(base, &[("app.py", Some(ok))]));
    let bad = "from company.billing import ledger\n";
    let f = both(base, &[("app.py", Some(bad))]);
    assert_only_unresolved(&f, 1, bad.trim(), "namespace package");
}

#[test]
fn python_poetry_dependencies() {
    let base: &[(&str, &str)] = &[
        (
            "pyproject.toml",
            "[tool.poetry]\nname = \"svc\"\npackages = [{ include = \"svc\", from = \"lib\" }]\n\n\
         [tool.poetry.dependencies]\npython = \"^3.11\"\nrequests = \"^2\"\nPyJWT = \"^2\"\n\n\
         [tool.poetry.group.dev.dependencies]\npytest = \"^8\"\n",
        ),
        ("lib/svc/__init__.py", ""),
    ];
    let src = "import requests\nimport jwt\nimport pytest\nimport svc\nimport flask\n";
    let f = both(base, &[("tests/test_x.py", Some(src))]);
    assert_only_unresolved(&f, 5, "import flask", "pyproject.toml");
}

#[test]
fn python_requirements_with_extras_and_markers() {
    let base: &[(&str, &str)] = &[
        (
            "requirements.txt",
            "# runtime\n-r requirements-dev.txt\n--index-url https://example.invalid/simple\n\
             uvicorn[standard]>=0.20 ; python_version >= \"3.8\"\nPyYAML==6.0.1  # yaml\n\
             beautifulsoup4\nopencv-python-headless\ngit+https://example.invalid/x.git#egg=internal-lib\n",
        ),
        ("requirements-dev.txt", "pytest-asyncio\n"),
        ("setup.cfg", "[options]\ninstall_requires =\n    attrs>=22\n    protobuf\n"),
    ];
    let src = "import uvicorn\nimport yaml\nfrom bs4 import BeautifulSoup\nimport cv2\nimport internal_lib\nimport pytest_asyncio\nimport attr\nfrom google.protobuf import message\nimport index\n";
    let f = both(base, &[("app/main.py", Some(src))]);
    assert_only_unresolved(&f, 9, "import index", "requirements.txt");
}

#[test]
fn python_try_except_import_error_is_a_warning() {
    let src = "\
try:
    import ujsonn as json
except ImportError:
    import json
try:
    import orjsonn
except (ValueError, ModuleNotFoundError):
    orjsonn = None
try:
    import simdjsonn
except KeyError:
    pass
if sys.version_info < (3, 11):
    import tomlii
if TYPE_CHECKING:
    import typecheckonly
";
    let f = both(&[], &[("fast.py", Some(src))]);
    assert_eq!(
        brief(&f),
        vec![
            optional(2, "import ujsonn as json"),
            optional(6, "import orjsonn"),
            unresolved(10, "import simdjsonn"),
            optional(14, "import tomlii"),
            unresolved(16, "import typecheckonly"),
        ]
    );
    assert_eq!(f[0].severity, "warning");
    assert_eq!(f[1].severity, "warning");
    assert_eq!(f[2].severity, "critical");
    assert!(f.iter().all(|x| x.category == "hallucination"));
}

#[test]
fn python_virtualenv_counts_as_installed() {
    let env = TestEnv::new();
    let root = env.root().join("proj");
    write(&root, "README.md", "x\n");
    let sp = ".venv/lib/python3.11/site-packages";
    write(&root, &format!("{sp}/click/__init__.py"), "");
    write(
        &root,
        &format!("{sp}/some_dist-1.0.dist-info/top_level.txt"),
        "weird_name\n",
    );
    write(
        &root,
        &format!("{sp}/other-2.0.dist-info/RECORD"),
        "otherpkg/__init__.py,sha256=x,1\n",
    );
    let change = vec![ChangedFile {
        path: "cli.py".into(),
        before: None,
        after: Some("import click\nimport weird_name\nimport otherpkg\nimport nothere\n".into()),
    }];
    let source = DirSource::new(&root);
    let with_venv = evidence_with(
        &source,
        &change,
        &EvidenceOptions {
            venv_root: Some(root.clone()),
        },
    );
    assert_only_unresolved(&with_venv, 4, "import nothere", ".venv");
    let without = evidence(&source, &change);
    assert_eq!(without.len(), 4);
}

#[test]
fn python_setup_py_variables_and_sys_path_insertions() {
    let base: &[(&str, &str)] = &[
        (
            "setup.py",
            "from setuptools import setup\n\nrequires = [\n    \"charset_normalizer>=2\",\n    \"idna\",\n]\nEXTRAS = {\"socks\": [\"PySocks\"]}\n\nsetup(name=\"req\", install_requires=requires, extras_require=EXTRAS)\n",
        ),
        ("tools/vendor/thing.py", "X = 1\n"),
        ("test/lib/TestHelper.py", "Y = 2\n"),
    ];
    let tool = "\
import os
import sys
sys.path.insert(0, os.path.join(os.path.dirname(__file__), \"vendor\"))
sys.path.append(os.path.abspath(\"test/lib\"))
import thing
import TestHelper
import charset_normalizer
import idna
import socks
import pkg_resources
import nonexistent_helper
";
    let f = both(base, &[("tools/run.py", Some(tool))]);
    assert_eq!(brief(&f), vec![unresolved(11, "import nonexistent_helper")]);
}

// ---------------------------------------------------------------- Rust imports

const WS_BASE: &[(&str, &str)] = &[
    (
        "Cargo.toml",
        "[workspace]\nmembers = [\"crates/core\", \"crates/app\"]\n\n[workspace.dependencies]\ntokio = \"1\"\n",
    ),
    (
        "crates/core/Cargo.toml",
        "[package]\nname = \"triad-core\"\nedition = \"2021\"\n\n[dependencies]\nserde = \"1\"\n",
    ),
    (
        "crates/core/src/lib.rs",
        "//! Core.\npub mod model;\n#[path = \"platform/unix.rs\"]\nmod imp;\npub use model::Thing;\n\n#[macro_export]\nmacro_rules! here { () => {} }\n",
    ),
    (
        "crates/core/src/model/mod.rs",
        "mod parts;\npub use parts::Part;\npub struct Thing;\npub enum Color { Red, Green }\npub mod nested {\n    pub fn deep() {}\n}\n",
    ),
    ("crates/core/src/model/parts.rs", "pub struct Part;\n"),
    ("crates/core/src/platform/unix.rs", "pub fn fd() -> i32 { 0 }\n"),
    (
        "crates/app/Cargo.toml",
        "[package]\nname = \"app\"\nedition = \"2021\"\n\n[dependencies]\ntriad-core = { path = \"../core\" }\n\
         serde_json2 = { package = \"serde_json\", version = \"1\" }\ntokio.workspace = true\n\n\
         [target.'cfg(unix)'.dependencies]\nnix = \"0.29\"\n\n[dev-dependencies]\ntempfile = \"3\"\n\n\
         [build-dependencies]\ncc = \"1\"\n",
    ),
    ("crates/app/src/main.rs", "mod cli;\nmod util;\nfn main() {}\n"),
    ("crates/app/src/cli.rs", "pub fn run() {}\n"),
    ("crates/app/src/util/mod.rs", "pub mod fmt;\npub fn helper() {}\n"),
    ("crates/app/src/util/fmt.rs", "pub fn pretty() {}\n"),
];

#[test]
fn rust_workspace_and_every_use_form_have_zero_false_positives() {
    let core_user = "\
use crate::model::{self, Thing, Color::*, nested::{deep as d}};
use crate::model::parts::Part;
use crate::imp::fd;
use crate::here;
use self::model::Color;
use std::{collections::HashMap, fmt::{self, Display}};
use ::serde::Serialize;
use serde::*;
extern crate alloc;
extern crate self as triad_core;

pub enum Local { A, B }
use Local::*;

mod inner {
    use super::Thing;
    use super::model::*;

    #[cfg(test)]
    mod tests {
        use super::super::Color;
        use super::*;
    }
}

pub fn f() -> usize {
    enum Mode { X }
    use Mode::X;
    let _ = X;
    0
}
";
    let app_fmt = "\
use super::helper;
use super::super::cli::run;
use crate::util::{self, fmt};
use triad_core::{Thing, model::Part};
use serde_json2::Value;
use tokio::runtime::Runtime;
use nix::unistd;
use tempfile::TempDir;
use cc::Build;
use app::cli;
";
    let main = "mod cli;\nmod util;\nmod local;\nuse local::Thing as T;\nuse util::helper;\nfn main() {}\n";
    let f = both(
        WS_BASE,
        &[
            ("crates/core/src/user.rs", Some(core_user)),
            ("crates/app/src/util/fmt.rs", Some(app_fmt)),
            ("crates/app/src/main.rs", Some(main)),
            ("crates/app/src/local.rs", Some("pub struct Thing;\n")),
            ("crates/core/src/lib.rs", Some("//! Core.\npub mod model;\npub mod user;\n#[path = \"platform/unix.rs\"]\nmod imp;\npub use model::Thing;\n\n#[macro_export]\nmacro_rules! here { () => {} }\n")),
        ],
    );
    none(&f);
}

#[test]
fn rust_unresolved_paths_are_reported() {
    let src = "\
use serde_json::Value;
use crate::nope::X;
use crate::model::Missing;
use crate::model::{Thing, Ghost};
use self::absent::Y;
use super::super::super::x;
extern crate nothere;
use ::nothere2::Z;
use tokio::spawn;
use rand::Rng;

mod inner {
    use super::Gone;
}
";
    let model = "mod parts;\nmod extra;\npub use parts::Part;\npub struct Thing;\npub enum Color { Red, Green }\npub mod nested {\n    pub fn deep() {}\n}\n";
    let f = both(
        WS_BASE,
        &[
            ("crates/core/src/model/extra.rs", Some(src)),
            ("crates/core/src/model/mod.rs", Some(model)),
        ],
    );
    let want: Vec<(String, u32, String)> = [
        (1, "use serde_json::Value;"),
        (2, "use crate::nope::X;"),
        (3, "use crate::model::Missing;"),
        (4, "use crate::model::{Thing, Ghost};"),
        (5, "use self::absent::Y;"),
        (6, "use super::super::super::x;"),
        (7, "extern crate nothere;"),
        (8, "use ::nothere2::Z;"),
        (9, "use tokio::spawn;"),
        (10, "use rand::Rng;"),
        (13, "use super::Gone;"),
    ]
    .iter()
    .map(|(l, t)| unresolved(*l, t))
    .collect();
    assert_eq!(brief(&f), want, "{f:#?}");
    assert_reason(&f[0], "crates/core/Cargo.toml");
    assert_reason(&f[2], "no `Missing` in module `crate::model`");
    assert_reason(&f[5], "too many `super`");
    assert_eq!(
        f[10]
            .symbol
            .as_ref()
            .map(|s| (s.kind.as_str(), s.name.as_str())),
        Some(("mod", "inner"))
    );
}

#[test]
fn rust_renamed_dependency_resolves_by_its_key() {
    let ok = "use serde_json2::Value;\nfn main() {}\n";
    none(&both(WS_BASE, &[("crates/app/src/bin/tool.rs", Some(ok))]));
    let bad = "use serde_json::Value;\nfn main() {}\n";
    let f = both(WS_BASE, &[("crates/app/src/bin/tool.rs", Some(bad))]);
    assert_only_unresolved(&f, 1, "use serde_json::Value;", "crates/app/Cargo.toml");
}

#[test]
fn rust_integration_tests_use_the_crate_and_its_helpers() {
    let test = "mod common;\nuse common::setup;\nuse app::cli;\nuse triad_core::Thing;\n#[test]\nfn t() {}\n";
    let helper = "pub fn setup() {}\n";
    none(&both(
        WS_BASE,
        &[
            ("crates/app/tests/it.rs", Some(test)),
            ("crates/app/tests/common/mod.rs", Some(helper)),
        ],
    ));
}

#[test]
fn rust_added_only_and_multiline_leaf_lines() {
    let before = "use rand::Rng;\nfn a() {}\n";
    let after = "use rand::Rng;\nuse std::{\n    fmt,\n    io::{self, Write},\n};\nuse crate::{\n    model::Thing,\n    model::Nope,\n};\nfn a() {}\n";
    let base: Vec<(&str, &str)> = WS_BASE
        .iter()
        .copied()
        .chain([("crates/core/src/old.rs", before)])
        .collect();
    let lib = "//! Core.\npub mod model;\nmod old;\n#[path = \"platform/unix.rs\"]\nmod imp;\npub use model::Thing;\n";
    let f = both(
        &base,
        &[
            ("crates/core/src/old.rs", Some(after)),
            ("crates/core/src/lib.rs", Some(lib)),
        ],
    );
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!((f[0].line, f[0].end_line), (8, 8));
}

#[test]
fn rust_macro_generated_aliased_and_undeclared_code_is_not_judged() {
    let lib = "\
extern crate alloc as stdalloc;
mod sys;
mod gen;
mod attrs;
";
    // `cfg_os_poll!` declares a module and re-exports it: anything may come out.
    let sys = "\
macro_rules! cfg_os_poll { ($($i:item)*) => { $($i)* } }
cfg_os_poll! {
    mod unix;
    pub use self::unix::*;
}
";
    let unix = "pub struct Event;\n";
    // Names generated by a local macro's body or an attribute macro's arguments.
    let gen = "\
macro_rules! make { () => { pub struct Generated; } }
make!();
";
    let attrs = "\
#[strum_discriminants(name(Kind))]
pub enum Thing { A }
#[cfg_attr(test, mockall::automock)]
#[mockall::automock]
pub trait Store {}
";
    let user = "\
use stdalloc::vec::Vec;
use crate::sys::Event;
use crate::gen::Generated;
use crate::attrs::{Kind, MockStore};
";
    // Not declared by any `mod`: not compiled, so relative paths are not judged, but
    // undeclared crates still are.
    let dead = "use crate::nothing::Here;\nuse super::neither;\nuse not_a_dep::X;\n";
    let base: &[(&str, &str)] = &[(
        "Cargo.toml",
        "[package]\nname = \"m\"\nedition = \"2021\"\n",
    )];
    let f = both(
        base,
        &[
            ("src/lib.rs", Some(&format!("{lib}mod user;\n"))),
            ("src/sys/mod.rs", Some(sys)),
            ("src/sys/unix.rs", Some(unix)),
            ("src/gen.rs", Some(gen)),
            ("src/attrs.rs", Some(attrs)),
            ("src/user.rs", Some(user)),
            ("src/dead.rs", Some(dead)),
        ],
    );
    assert_eq!(
        brief(&f),
        vec![unresolved(3, "use not_a_dep::X;")],
        "{f:#?}"
    );
}

// ---------------------------------------------------------------- Syntax

#[test]
fn syntax_error_introduced_is_found_with_its_line() {
    let before = "def ok():\n    return 1\n\n\ndef other():\n    return 2\n";
    let after = "def ok():\n    return 1\n\n\ndef other():\n    return foo(1,\n\n\ndef third():\n    pass\n";
    let f = both(&[("m.py", before)], &[("m.py", Some(after))]);
    assert!(!f.is_empty());
    assert!(f
        .iter()
        .all(|x| x.kind == "syntax_error" && x.category == "logic" && x.severity == "critical"));
    assert!(f.iter().any(|x| x.line == 6), "{f:#?}");
    assert_reason(&f[0], "syntax error introduced by this change");

    let rs_before = "pub fn a() -> u32 {\n    1\n}\n";
    let rs_after =
        "pub fn a() -> u32 {\n    1\n}\n\npub fn b() -> u32 {\n    let x = ;\n    x\n}\n";
    let f = both(
        &[("src/lib.rs", rs_before)],
        &[("src/lib.rs", Some(rs_after))],
    );
    assert_eq!(f.len(), 1, "{f:#?}");
    assert_eq!(f[0].line, 6);
    assert_eq!(f[0].symbol.as_ref().map(|s| s.name.as_str()), Some("b"));
}

#[test]
fn syntax_error_already_there_is_not_new() {
    let before = "def broken(:\n    pass\n";
    let after = "import os\n\n\ndef broken(:\n    pass\n\n\ndef added():\n    return os.sep\n";
    assert!(!code::syntax_issues(Lang::Python, after).is_empty());
    none(&both(
        &[("legacy.py", before)],
        &[("legacy.py", Some(after))],
    ));
    assert!(code::new_syntax_issues(Lang::Python, Some(before), after).is_empty());
    let more = "def broken(:\n    pass\n\n\ndef added(:\n    pass\n";
    let new = code::new_syntax_issues(Lang::Python, Some(before), more);
    assert!(!new.is_empty());
    assert!(new.iter().all(|i| i.start_line >= 5), "{new:#?}");
}

// ---------------------------------------------------------------- Symbols

fn sym(kind: &str, name: &str, start: u32, end: u32) -> Symbol {
    Symbol {
        kind: kind.into(),
        name: name.into(),
        start_line: start,
        end_line: end,
    }
}

/// `kind name` of each symbol enclosing `line`, outermost first.
fn enclosing(lang: Lang, src: &str, line: u32) -> Vec<String> {
    code::enclosing(lang, src, line)
        .into_iter()
        .map(|s| format!("{} {}", s.kind, s.name))
        .collect()
}

#[test]
fn python_decorated_and_nested_definitions() {
    let src = "\
import functools


@functools.total_ordering
class Money:
    rate = 1

    @property
    @functools.cache
    def cents(self):
        def inner():
            return 1
        return inner()

    def plain(self):
        return 2


def outer():
    def helper():
        class Local:
            def m(self):
                pass
        return Local
    return helper
";
    assert_eq!(
        code::outline(Lang::Python, src),
        vec![
            sym("class", "Money", 4, 16),
            sym("method", "cents", 8, 13),
            sym("function", "inner", 11, 12),
            sym("method", "plain", 15, 16),
            sym("function", "outer", 19, 25),
            sym("function", "helper", 20, 24),
            sym("class", "Local", 21, 23),
            sym("method", "m", 22, 23),
        ]
    );
    assert_eq!(
        enclosing(Lang::Python, src, 12),
        ["class Money", "method cents", "function inner"]
    );
    assert_eq!(
        code::innermost(Lang::Python, src, 8, 9),
        Some(sym("method", "cents", 8, 13))
    );
    assert_eq!(code::innermost(Lang::Python, src, 1, 1), None);
}

#[test]
fn rust_impls_traits_and_nesting() {
    let src = "\
use std::fmt;

pub mod shapes {
    #[derive(Debug)]
    pub struct Foo;

    impl fmt::Display for Foo {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, \"foo\")
        }
    }

    impl Foo {
        pub fn new() -> Self {
            Foo
        }
    }
}

pub trait Area {
    fn area(&self) -> f64;
}

pub enum E { A }

macro_rules! m { () => {} }
";
    assert_eq!(
        code::outline(Lang::Rust, src),
        vec![
            sym("mod", "shapes", 3, 18),
            sym("struct", "Foo", 4, 5),
            sym("impl", "fmt::Display for Foo", 7, 11),
            sym("fn", "fmt", 8, 10),
            sym("impl", "Foo", 13, 17),
            sym("fn", "new", 14, 16),
            sym("trait", "Area", 20, 22),
            sym("fn", "area", 21, 21),
            sym("enum", "E", 24, 24),
            sym("macro_rules", "m", 26, 26),
        ]
    );
    let display = "use std::fmt::Display;\nstruct Foo;\nimpl Display for Foo {\n    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result { Ok(()) }\n}\n";
    assert_eq!(
        enclosing(Lang::Rust, display, 4),
        ["impl Display for Foo", "fn fmt"]
    );
}

// ---------------------------------------------------------------- Plumbing

#[test]
fn imports_api_and_added_imports() {
    let rs = code::imports(Lang::Rust, "use a::{b, c::{d as e}, self};\nuse x::*;\n");
    let pairs: Vec<(String, Vec<String>)> = rs.into_iter().map(|i| (i.module, i.names)).collect();
    assert_eq!(
        pairs,
        vec![
            ("a".into(), vec!["b".into()]),
            ("a::c".into(), vec!["d".into()]),
            ("a".into(), vec!["self".into()]),
            ("x".into(), vec!["*".into()]),
        ]
    );
    let added = code::added_imports(
        Lang::Python,
        Some("import os\n"),
        "import os\nfrom .. import z\n",
    );
    assert_eq!(added.len(), 1);
    assert_eq!((added[0].level, added[0].module.as_str()), (2, ""));
}

#[test]
fn base_tree_source_sees_the_change_through_the_overlay() {
    // The source is the *old* commit; the change adds a module and a file importing it.
    let env = TestEnv::new();
    let dir = env.repo("r", PY_BASE);
    let repo = git2::Repository::open(&dir).expect("open");
    let tree = repo.head().and_then(|h| h.peel_to_tree()).expect("tree");
    let source = GitTreeSource::new(&repo, tree);
    assert!(source.is_dir("pkg") && source.is_file("pkg/x.py") && !source.is_file("pkg"));
    assert_eq!(source.list("pkg"), ["__init__.py", "sub", "x.py"]);
    assert!(source
        .read("pkg/x.py")
        .is_some_and(|t| t.contains("helper")));
    let change = vec![
        ChangedFile {
            path: "pkg/fresh/__init__.py".into(),
            before: None,
            after: Some(String::new()),
        },
        ChangedFile {
            path: "pkg/user.py".into(),
            before: None,
            after: Some("from .fresh import thing\nfrom pkg import fresh\nimport pkg.x\n".into()),
        },
        ChangedFile {
            path: "pkg/x.py".into(),
            before: Some("def helper():\n    return 1\n".into()),
            after: None,
        },
    ];
    let f = evidence(&source, &change);
    assert_eq!(brief(&f), vec![unresolved(3, "import pkg.x")]);
}

#[test]
fn findings_round_trip_as_json() {
    let f = both(&[], &[("x.py", Some("import nothere_at_all\n"))]);
    let json = serde_json::to_string(&f).expect("serialize");
    let back: Vec<Finding> = serde_json::from_str(&json).expect("deserialize");
    assert_eq!(back, f);
    assert!(json.contains("\"kind\":\"unresolved_import\""));
}
