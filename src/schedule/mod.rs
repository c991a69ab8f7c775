//! Work that runs once per database, whatever the number of processes:
//! the leader's lease (`leader`), and the cron expressions schedules fire
//! by (`cron_expr`).

pub mod cron_expr;
pub mod leader;
