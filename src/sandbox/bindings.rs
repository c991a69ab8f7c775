//! The host side of the task worlds (wit/task.wit), and nothing else. The
//! bindings are the `orchestrator` world's, which includes the `task`
//! world: a component of either links against them (one that imports no
//! orchestration is a plain task). The world `use`s `types`, so `Job`,
//! `Failure` and `Outcome` are generated at this module's root.

wasmtime::component::bindgen!({
    path: "wit/task.wit",
    world: "orchestrator",
    imports: { "taskbox:task/orchestration": async },
    exports: { default: async },
});

pub use self::taskbox::task::host::Level as GuestLevel;
