//! The host side of the task worlds (wit/task.wit), and nothing else. The
//! bindings are the `sandbox` world's, which includes the `orchestrator`
//! and `task` worlds: a component of any links against them (one that
//! imports no orchestration is a plain task). The world `use`s `types`, so
//! `Job`, `Failure` and `Outcome` are generated at this module's root.

wasmtime::component::bindgen!({
    path: "wit/task.wit",
    world: "sandbox",
    imports: { "taskbox:task/orchestration": async, "taskbox:task/fetch": async },
    exports: { default: async },
});

pub use self::taskbox::task::host::Level as GuestLevel;
