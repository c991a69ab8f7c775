//! Work that runs once per database, whatever the number of processes:
//! the leader's lease (`leader`), cron schedules (`spec`, their
//! expressions in `cron_expr`) and the leader's firing of their slots
//! (`firer`), and an expression in words for the pages that show it
//! (`words`).

pub mod cron_expr;
pub mod firer;
pub mod leader;
pub mod spec;
pub mod words;
