//! First look at uploaded bytes, before anything is compiled: is it WebAssembly,
//! which ABI does it speak, and does it import only what the host offers?

use crate::abi::Abi;
use std::fmt;
use wasmtime::wasmparser::{
    ComponentExternalKind, ComponentTypeRef, ExternalKind, Parser, Payload, TypeRef,
};

/// The binary shape behind an [`Abi`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shape {
    /// A component exporting the task world's `run`.
    TaskComponent,
    /// A preview-2 component exporting `wasi:cli/run`.
    CommandComponent,
    /// A preview-1 core module exporting `_start`.
    CommandModule,
}

impl Shape {
    pub fn abi(self) -> Abi {
        match self {
            Shape::TaskComponent => Abi::Task,
            Shape::CommandComponent | Shape::CommandModule => Abi::Command,
        }
    }

    pub fn is_component(self) -> bool {
        !matches!(self, Shape::CommandModule)
    }
}

/// Why bytes were refused. The message says what is wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("the component is {size} bytes; the limit is {limit} bytes")]
    TooLarge { size: usize, limit: usize },
    #[error("not a WebAssembly binary: it does not start with the `\\0asm` magic number")]
    NotWasm,
    #[error("malformed WebAssembly: {0}")]
    Malformed(String),
    #[error(
        "imports that the host does not offer: {}. A task may import only \
         `taskbox:task/{{host,orchestration,fetch,trace}}@0.1.x`, WASI 0.2 (cli, io, clocks, random, filesystem, sockets, \
         http/types, http/outgoing-handler) and `wasi:config/store@0.2.0-rc.1`; a command module \
         only `wasi_snapshot_preview1`",
        .0.join(", ")
    )]
    ForbiddenImports(Vec<String>),
    #[error(
        "it speaks neither ABI: a component must export the task world's `run` function \
         (wit/task.wit) or `wasi:cli/run`; a core module must be a WASI command exporting `_start`"
    )]
    NoEntryPoint,
    #[error("it does not compile: {0}")]
    Compile(String),
    /// Not the component's fault: the compiler could not take it now.
    #[error("{0}")]
    Busy(String),
    #[error("it does not link against the host: {0}")]
    Link(String),
}

/// What one package namespace may be imported at, and which interfaces.
const OFFERED: &[(&str, &str, &[&str])] = &[
    (
        "taskbox:task",
        "0.1.",
        &["host", "types", "orchestration", "fetch", "trace"],
    ),
    (
        "wasi:cli",
        "0.2.",
        &[
            "environment",
            "exit",
            "stdin",
            "stdout",
            "stderr",
            "terminal-input",
            "terminal-output",
            "terminal-stdin",
            "terminal-stdout",
            "terminal-stderr",
        ],
    ),
    ("wasi:io", "0.2.", &["error", "poll", "streams"]),
    ("wasi:clocks", "0.2.", &["monotonic-clock", "wall-clock"]),
    (
        "wasi:random",
        "0.2.",
        &["random", "insecure", "insecure-seed"],
    ),
    ("wasi:filesystem", "0.2.", &["types", "preopens"]),
    (
        "wasi:sockets",
        "0.2.",
        &[
            "network",
            "instance-network",
            "udp",
            "udp-create-socket",
            "tcp",
            "tcp-create-socket",
            "ip-name-lookup",
        ],
    ),
    // Refused per request unless the task grants network access.
    ("wasi:http", "0.2.", &["types", "outgoing-handler"]),
    // The task's declared secrets, and nothing else.
    ("wasi:config", "0.2.0-rc.", &["store"]),
];

/// Whether a component import name (`ns:pkg/iface@version`) is on offer.
pub fn component_import_offered(name: &str) -> bool {
    let Some((path, version)) = name.split_once('@') else {
        return false;
    };
    let Some((package, interface)) = path.split_once('/') else {
        return false;
    };
    OFFERED.iter().any(|(pkg, ver, ifaces)| {
        *pkg == package && version.starts_with(ver) && ifaces.contains(&interface)
    })
}

/// The component size bounds, which the API and the CLI name too.
pub use crate::bounds::{DEFAULT_MAX_COMPONENT_BYTES, MAX_COMPONENT_BYTES_CEILING};

/// Looks at the bytes without compiling them: size, magic, ABI, imports.
/// `module_imports_offered` says whether a core-module import is linked.
pub fn inspect(
    bytes: &[u8],
    max_size: usize,
    module_import_offered: impl Fn(&str, &str) -> bool,
) -> Result<Shape, Invalid> {
    if bytes.len() > max_size {
        return Err(Invalid::TooLarge {
            size: bytes.len(),
            limit: max_size,
        });
    }
    if !bytes.starts_with(b"\0asm") {
        return Err(Invalid::NotWasm);
    }
    if Parser::is_component(bytes) {
        inspect_component(bytes)
    } else if Parser::is_core_wasm(bytes) {
        inspect_module(bytes, module_import_offered)
    } else {
        Err(Invalid::Malformed(
            "unknown WebAssembly binary version".into(),
        ))
    }
}

fn malformed(e: impl fmt::Display) -> Invalid {
    Invalid::Malformed(e.to_string())
}

fn inspect_component(bytes: &[u8]) -> Result<Shape, Invalid> {
    let mut depth = 0usize;
    let mut forbidden = Vec::new();
    let (mut task, mut command) = (false, false);
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(malformed)? {
            Payload::Version { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 1 => {
                for import in reader {
                    let import = import.map_err(malformed)?;
                    // A type import (a world `use`ing types) grants nothing.
                    let is_type = matches!(import.ty, ComponentTypeRef::Type(_));
                    if !is_type && !component_import_offered(import.name.name) {
                        forbidden.push(import.name.name.to_owned());
                    }
                }
            }
            Payload::ComponentExportSection(reader) if depth == 1 => {
                for export in reader {
                    let export = export.map_err(malformed)?;
                    let name = export.name.name;
                    match export.kind {
                        ComponentExternalKind::Func if name == "run" => task = true,
                        ComponentExternalKind::Instance
                            if name.starts_with("wasi:cli/run@0.2.") =>
                        {
                            command = true
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if !forbidden.is_empty() {
        return Err(Invalid::ForbiddenImports(forbidden));
    }
    match (task, command) {
        (true, _) => Ok(Shape::TaskComponent),
        (false, true) => Ok(Shape::CommandComponent),
        (false, false) => Err(Invalid::NoEntryPoint),
    }
}

fn inspect_module(bytes: &[u8], offered: impl Fn(&str, &str) -> bool) -> Result<Shape, Invalid> {
    let mut forbidden = Vec::new();
    let mut start = false;
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(malformed)? {
            Payload::ImportSection(reader) => {
                for imports in reader {
                    for import in imports.map_err(malformed)? {
                        let (_, import) = import.map_err(malformed)?;
                        if !matches!(import.ty, TypeRef::Func(_))
                            || !offered(import.module, import.name)
                        {
                            forbidden.push(format!("{}::{}", import.module, import.name));
                        }
                    }
                }
            }
            Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.map_err(malformed)?;
                    if export.name == "_start" && export.kind == ExternalKind::Func {
                        start = true;
                    }
                }
            }
            _ => {}
        }
    }
    if !forbidden.is_empty() {
        return Err(Invalid::ForbiddenImports(forbidden));
    }
    if !start {
        return Err(Invalid::NoEntryPoint);
    }
    Ok(Shape::CommandModule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offered_imports() {
        assert!(component_import_offered("taskbox:task/host@0.1.0"));
        assert!(component_import_offered("taskbox:task/trace@0.1.0"));
        assert!(!component_import_offered("taskbox:task/tracer@0.1.0"));
        assert!(component_import_offered("wasi:cli/environment@0.2.3"));
        assert!(!component_import_offered("wasi:cli/environment@0.3.0"));
        assert!(component_import_offered("wasi:http/outgoing-handler@0.2.0"));
        assert!(component_import_offered("wasi:http/types@0.2.12"));
        assert!(!component_import_offered(
            "wasi:http/incoming-handler@0.2.0"
        ));
        assert!(component_import_offered("wasi:config/store@0.2.0-rc.1"));
        assert!(!component_import_offered("wasi:config/store@0.1.0"));
        assert!(!component_import_offered("evil:net/raw@0.1.0"));
        assert!(!component_import_offered("run"));
    }

    #[test]
    fn refuses_non_wasm_and_oversize() {
        let any = |_: &str, _: &str| true;
        assert_eq!(inspect(b"hello", 100, any), Err(Invalid::NotWasm));
        assert!(matches!(
            inspect(&[0; 200], 100, any),
            Err(Invalid::TooLarge { .. })
        ));
    }

    #[test]
    fn names_every_forbidden_module_import() {
        let wasm = wat::parse_str(
            r#"(module
                (import "env" "a" (func))
                (import "wasi_snapshot_preview1" "fd_write" (func))
                (import "env" "b" (func))
                (func (export "_start")))"#,
        )
        .unwrap();
        let offered = |m: &str, _: &str| m == "wasi_snapshot_preview1";
        match inspect(&wasm, 1 << 20, offered) {
            Err(Invalid::ForbiddenImports(names)) => assert_eq!(names, ["env::a", "env::b"]),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn module_without_start_has_no_entry_point() {
        let wasm = wat::parse_str("(module (func (export \"main\")))").unwrap();
        assert_eq!(
            inspect(&wasm, 1 << 20, |_, _| true),
            Err(Invalid::NoEntryPoint)
        );
    }
}
