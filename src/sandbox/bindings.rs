//! The host side of the task world (wit/task.wit), and nothing else.
//! The world `use`s `types`, so `Job`, `Failure` and `Outcome` are generated
//! at this module's root.

wasmtime::component::bindgen!({
    path: "wit/task.wit",
    world: "task",
    exports: { default: async },
});

pub use self::taskbox::task::host::Level as GuestLevel;
