//! invoice: a real task that turns an order into an invoice, with integer-cent arithmetic
//! (percentages rounded half up). A test should expect, for `example.json`, output
//! `{"invoice_number": "INV-<order_id>", "customer", "currency", "lines": [...],
//! "subtotal_cents", "discount_cents", "tax_cents", "total_cents"}`, one `info` log line,
//! progress 50 then 100 (for `example.json`: subtotal 10547, discount 527 (5 %), tax 1904 (19 % of
//! 10020), total 11924 cents); `err(empty_order, retryable=false)` for an order without items and
//! `err(bad_input, retryable=false)` for input that does not parse.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

use serde::{Deserialize, Serialize};
use taskbox::task::host::{self, Level};

#[derive(Deserialize)]
struct Order {
    order_id: String,
    customer: Customer,
    currency: String,
    items: Vec<Item>,
    #[serde(default)]
    tax_rate_percent: Option<f64>,
    #[serde(default)]
    discount_percent: Option<f64>,
}

#[derive(Deserialize, Serialize)]
struct Customer {
    name: String,
    email: String,
}

#[derive(Deserialize)]
struct Item {
    sku: String,
    description: String,
    quantity: u64,
    unit_price_cents: u64,
}

#[derive(Serialize)]
struct Invoice {
    invoice_number: String,
    customer: Customer,
    currency: String,
    lines: Vec<Line>,
    subtotal_cents: u64,
    discount_cents: u64,
    tax_cents: u64,
    total_cents: u64,
}

#[derive(Serialize)]
struct Line {
    sku: String,
    description: String,
    quantity: u64,
    unit_price_cents: u64,
    total_cents: u64,
}

/// Percentages are taken with four decimal places (12.5 % is 125_000 / 1_000_000).
const PERCENT_SCALE: u128 = 10_000;

fn failure(code: &str, message: impl Into<String>) -> Failure {
    Failure { code: code.to_string(), message: message.into(), retryable: false }
}

/// `percent` of `cents`, rounded half up, in integer arithmetic.
fn percent_of(cents: u64, percent: f64, what: &str) -> Result<u64, Failure> {
    if !percent.is_finite() || !(0.0..=100.0).contains(&percent) {
        return Err(failure("bad_input", format!("{what} must be between 0 and 100, got {percent}")));
    }
    let scaled = (percent * PERCENT_SCALE as f64).round() as u128;
    let divisor = 100 * PERCENT_SCALE;
    let amount = (cents as u128 * scaled + divisor / 2) / divisor;
    Ok(amount as u64) // <= cents, since percent <= 100
}

fn make_invoice(order: Order) -> Result<Invoice, Failure> {
    if order.items.is_empty() {
        return Err(failure("empty_order", format!("order {} has no items", order.order_id)));
    }
    let overflow = || failure("bad_input", "amounts too large");
    let mut lines = Vec::with_capacity(order.items.len());
    let mut subtotal: u64 = 0;
    for item in order.items {
        if item.quantity == 0 {
            return Err(failure("bad_input", format!("item {} has quantity 0", item.sku)));
        }
        let total = item.quantity.checked_mul(item.unit_price_cents).ok_or_else(overflow)?;
        subtotal = subtotal.checked_add(total).ok_or_else(overflow)?;
        lines.push(Line {
            sku: item.sku,
            description: item.description,
            quantity: item.quantity,
            unit_price_cents: item.unit_price_cents,
            total_cents: total,
        });
    }
    let discount = percent_of(subtotal, order.discount_percent.unwrap_or(0.0), "discount_percent")?;
    let taxable = subtotal - discount;
    let tax = percent_of(taxable, order.tax_rate_percent.unwrap_or(0.0), "tax_rate_percent")?;
    let total = taxable.checked_add(tax).ok_or_else(overflow)?;
    Ok(Invoice {
        invoice_number: format!("INV-{}", order.order_id),
        customer: order.customer,
        currency: order.currency,
        lines,
        subtotal_cents: subtotal,
        discount_cents: discount,
        tax_cents: tax,
        total_cents: total,
    })
}

struct InvoiceTask;

impl Guest for InvoiceTask {
    fn run(job: Job, input: String) -> Result<Outcome, Failure> {
        let order: Order = serde_json::from_str(&input)
            .map_err(|e| failure("bad_input", format!("input is not a valid order: {e}")))?;
        host::log(
            Level::Info,
            &format!("job {} attempt {}: invoicing order {} ({} items)", job.id, job.attempt, order.order_id, order.items.len()),
        );
        host::progress(50, "order parsed");
        let invoice = make_invoice(order)?;
        let output = serde_json::to_string(&invoice)
            .map_err(|e| failure("internal", format!("cannot serialize invoice: {e}")))?;
        host::progress(100, "invoice ready");
        Ok(Outcome::Done(output))
    }
}

export!(InvoiceTask);

#[cfg(test)]
mod tests {
    use super::percent_of;

    #[test]
    fn rounds_half_up() {
        assert_eq!(percent_of(250, 1.0, "x").unwrap(), 3); // 2.5 -> 3
        assert_eq!(percent_of(249, 1.0, "x").unwrap(), 2); // 2.49 -> 2
        assert_eq!(percent_of(1000, 12.5, "x").unwrap(), 125);
        assert_eq!(percent_of(1000, 100.0, "x").unwrap(), 1000);
    }
}
