//! The registry: components by digest and versioned task definitions. So
//! far: the task definition a tenant sends (`PUT /v1/tasks/{name}`) and its
//! checks; storage comes with the queue.

pub mod spec;
