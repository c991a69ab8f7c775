//! The guest world's bindings (wit-bindgen), shared by every task built with this crate; the
//! task's crate exports through `task!`, which calls the export macro made here.

wit_bindgen::generate!({
    path: ["wit/task", "wit/guest"],
    world: "taskbox:sdk/guest",
    generate_all,
    default_bindings_module: "taskbox_sdk::bindings",
    pub_export_macro: true,
    export_macro_name: "export_task",
});
