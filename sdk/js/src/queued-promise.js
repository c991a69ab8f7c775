// A Promise whose reactions run from a queue this module drains, not from the engine's job
// queue: the QuickJS runtime taskbox builds with (componentize-qjs --sync) runs no event loop
// inside a call, so an `await` on the engine's own promises would never resume before the
// call returns. `taskbox build` injects this file first into the bundle (it replaces the
// global `Promise`) and lowers `async`/`await` to generators over it (esbuild
// `--supported:async-await=false`); the component's `run` then calls the task and drains the
// queue until nothing is left to do. Ordering is the standard's: reactions run in the order
// they were queued, never synchronously inside `then`.

const PENDING = 0;
const FULFILLED = 1;
const REJECTED = 2;

const queue = [];

function enqueue(job) {
  queue.push(job);
}

/** Runs every queued reaction, and those they queue, until none is left. */
export function drain() {
  let i = 0;
  while (i < queue.length) {
    const job = queue[i++];
    job();
    // Keep the array short under long chains of awaits.
    if (i > 1024) {
      queue.splice(0, i);
      i = 0;
    }
  }
  queue.length = 0;
}

const states = new WeakMap();

/** `{state: "pending" | "fulfilled" | "rejected", value}` of a promise made here. */
export function inspect(promise) {
  const s = states.get(promise);
  if (!s) return { state: "foreign", value: undefined };
  return { state: ["pending", "fulfilled", "rejected"][s.state], value: s.value };
}

function isObject(v) {
  return v !== null && (typeof v === "object" || typeof v === "function");
}

export class QueuedPromise {
  constructor(executor) {
    if (typeof executor !== "function") {
      throw new TypeError("Promise resolver is not a function");
    }
    states.set(this, { state: PENDING, value: undefined, reactions: [] });
    const [resolve, reject] = resolvers(this);
    try {
      executor(resolve, reject);
    } catch (e) {
      reject(e);
    }
  }

  then(onFulfilled, onRejected) {
    const C = this.constructor && this.constructor[Symbol.species] ? this.constructor[Symbol.species] : QueuedPromise;
    let resolveNext;
    let rejectNext;
    const next = new C((res, rej) => {
      resolveNext = res;
      rejectNext = rej;
    });
    const reaction = (state, value) => {
      const handler = state === FULFILLED ? onFulfilled : onRejected;
      if (typeof handler !== "function") {
        (state === FULFILLED ? resolveNext : rejectNext)(value);
        return;
      }
      let out;
      try {
        out = handler(value);
      } catch (e) {
        rejectNext(e);
        return;
      }
      resolveNext(out);
    };
    const s = states.get(this);
    if (s.state === PENDING) s.reactions.push(reaction);
    else enqueue(() => reaction(s.state, s.value));
    return next;
  }

  catch(onRejected) {
    return this.then(undefined, onRejected);
  }

  finally(onFinally) {
    if (typeof onFinally !== "function") return this.then(onFinally, onFinally);
    return this.then(
      (v) => QueuedPromise.resolve(onFinally()).then(() => v),
      (e) =>
        QueuedPromise.resolve(onFinally()).then(() => {
          throw e;
        }),
    );
  }

  static get [Symbol.species]() {
    return this;
  }

  static resolve(v) {
    if (v instanceof QueuedPromise && v.constructor === this) return v;
    return new this((res) => res(v));
  }

  static reject(e) {
    return new this((_, rej) => rej(e));
  }

  static withResolvers() {
    let resolve;
    let reject;
    const promise = new this((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  }

  static all(items) {
    return combine(this, items, (values, i, v, done) => {
      values[i] = v;
      done();
    }, (reject, e) => reject(e), (resolve, values) => resolve(values));
  }

  static allSettled(items) {
    return combine(
      this,
      items,
      (values, i, v, done) => {
        values[i] = { status: "fulfilled", value: v };
        done();
      },
      null,
      (resolve, values) => resolve(values),
      (values, i, e, done) => {
        values[i] = { status: "rejected", reason: e };
        done();
      },
    );
  }

  static any(items) {
    return combine(
      this,
      items,
      null,
      null,
      (_, errors, reject) => reject(new AggregateError(errors, "All promises were rejected")),
      (errors, i, e, done) => {
        errors[i] = e;
        done();
      },
      (resolve, v) => resolve(v),
    );
  }

  static race(items) {
    return new this((resolve, reject) => {
      for (const item of items) this.resolve(item).then(resolve, reject);
    });
  }
}

Object.defineProperty(QueuedPromise.prototype, Symbol.toStringTag, { value: "Promise" });

/** The resolve and reject functions of `promise`: the first call of either wins. */
function resolvers(promise) {
  let done = false;
  const resolve = (v) => {
    if (done) return;
    done = true;
    resolveWith(promise, v);
  };
  const reject = (e) => {
    if (done) return;
    done = true;
    settle(promise, REJECTED, e);
  };
  return [resolve, reject];
}

function resolveWith(promise, v) {
  if (v === promise) {
    settle(promise, REJECTED, new TypeError("Chaining cycle detected for promise"));
    return;
  }
  if (isObject(v)) {
    let then;
    try {
      then = v.then;
    } catch (e) {
      settle(promise, REJECTED, e);
      return;
    }
    if (typeof then === "function") {
      const [resolve, reject] = resolvers(promise);
      enqueue(() => {
        try {
          then.call(v, resolve, reject);
        } catch (e) {
          reject(e);
        }
      });
      return;
    }
  }
  settle(promise, FULFILLED, v);
}

function settle(promise, state, value) {
  const s = states.get(promise);
  if (s.state !== PENDING) return;
  s.state = state;
  s.value = value;
  const reactions = s.reactions;
  s.reactions = [];
  for (const r of reactions) enqueue(() => r(state, value));
}

/**
 * Promise.all and its kin: `onValue` for each fulfilled item, `onError` for each rejected
 * one (or `first` rejects the whole at once), `finish` when every item is in.
 */
function combine(C, items, onValue, first, finish, onError, firstValue) {
  return new C((resolve, reject) => {
    const out = [];
    let left = 1;
    const done = () => {
      left -= 1;
      if (left === 0) finish(resolve, out, reject);
    };
    let i = 0;
    for (const item of items) {
      const index = i++;
      left += 1;
      C.resolve(item).then(
        (v) => {
          if (firstValue) firstValue(resolve, v);
          else onValue(out, index, v, done);
        },
        (e) => {
          if (first) first(reject, e);
          else onError(out, index, e, done);
        },
      );
    }
    done();
  });
}
