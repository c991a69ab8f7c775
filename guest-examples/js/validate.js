// js-validate: the "validate" step of the order-pipeline workflow, written in JavaScript (built
// with jco componentize, world `task`).
//
// Input: the workflow's context, an order
//   {"order_id": string, "customer": {"name", "email"}, "currency": "EUR"|…, "items": [
//     {"sku": string, "description": string, "quantity": integer > 0,
//      "unit_price_cents": integer >= 0}], ...}
// Output: the keys it adds to the context: {"validated": {"items": n, "units": total quantity}}.
// A broken order → err({code: "invalid_order", message: every problem found, retryable: false});
// input that is not JSON → err({code: "bad_input", retryable: false}).
import { log } from 'taskbox:task/host@0.1.0';

function fail(code, message) {
  // A plain object, not an Error: jco lowers it into the `failure` record.
  return { code, message, retryable: false };
}

function problems(order) {
  const out = [];
  if (typeof order !== 'object' || order === null || Array.isArray(order)) {
    return ['the order is not an object'];
  }
  if (typeof order.order_id !== 'string' || order.order_id.length === 0) {
    out.push('order_id must be a non-empty string');
  }
  const c = order.customer;
  if (typeof c !== 'object' || c === null) {
    out.push('customer must be an object with name and email');
  } else {
    if (typeof c.name !== 'string' || c.name.trim() === '') out.push('customer.name is empty');
    if (typeof c.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(c.email)) {
      out.push('customer.email is not an email address');
    }
  }
  if (typeof order.currency !== 'string' || !/^[A-Z]{3}$/.test(order.currency)) {
    out.push('currency must be a three-letter code such as EUR');
  }
  if (!Array.isArray(order.items) || order.items.length === 0) {
    out.push('items must list at least one item');
  } else {
    order.items.forEach((it, i) => {
      const at = `items[${i}]`;
      if (typeof it.sku !== 'string' || it.sku === '') out.push(`${at}.sku is empty`);
      if (!Number.isInteger(it.quantity) || it.quantity <= 0) {
        out.push(`${at}.quantity must be a whole number above 0`);
      }
      if (!Number.isInteger(it.unit_price_cents) || it.unit_price_cents < 0) {
        out.push(`${at}.unit_price_cents must be a whole number of cents`);
      }
    });
  }
  return out;
}

export function run(job, input) {
  let order;
  try {
    order = JSON.parse(input);
  } catch (e) {
    throw fail('bad_input', `input is not JSON: ${e.message}`);
  }
  const found = problems(order);
  if (found.length > 0) {
    throw fail('invalid_order', found.join('; '));
  }
  const units = order.items.reduce((n, it) => n + it.quantity, 0);
  log('info', `job ${job.id}: order ${order.order_id} is valid (${order.items.length} items)`);
  return { tag: 'done', val: JSON.stringify({ validated: { items: order.items.length, units } }) };
}
