// Types of the taskbox guest SDK for JavaScript and TypeScript.

/** Which job and attempt is running. `id` is stable across attempts: an idempotency key. */
export interface Job {
  readonly id: string;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly queue: string;
}

export type Level = "trace" | "debug" | "info" | "warn" | "error";

/** A JSON value: what inputs and outputs are made of. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** Fails the attempt with a machine-readable code (a task's `non_retryable` list matches it). */
export class Fail extends Error {
  constructor(code: string, message?: string, options?: { retryable?: boolean });
  readonly code: string;
  /** The message without the code. */
  readonly detail: string;
  /** false (the default): the job fails now, without further attempts. */
  readonly retryable: boolean;
  /** A failure another attempt may get past. */
  static retry(code: string, message?: string): Fail;
}

/** Run again after `ms` milliseconds; it does not use up an attempt. */
export class Snooze {
  constructor(ms: number);
  readonly ms: number;
}

/** Park the job until it is resumed through the API; `reason` says what it waits for. */
export class Wait {
  constructor(reason?: unknown);
  readonly reason: unknown;
}

/** The attempt's side of the sandbox. Natively (`Ctx.test()`), logs go to `logs` and stderr. */
export class Ctx {
  readonly job: Job;
  /** In a test context: every log line and progress report, in order. */
  readonly logs: { level: Level | "progress"; message: string }[];
  static test(options?: { attempt?: number; secrets?: Record<string, string> }): Ctx;
  withSecret(name: string, value: string): Ctx;
  log(level: Level, message: string): void;
  debug(message: string): void;
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
  /** 0-100 (more is taken as 100) with a short note; it also extends the job's lease. */
  progress(percent: number, note?: string): void;
  /** The tenant's secret `name`, which the task declares; else the final failure `missing_secret`. */
  secret(name: string): string;
  /** Runs another task of this tenant to completion and returns its output. */
  invoke<O = Json>(task: string, input: unknown): O;
  /** Enqueues a child job; its id. */
  spawn(task: string, input: unknown): string;
  /** Starts a span of the task's own in its attempt's trace; `end()` it. */
  span(name: string, attributes?: Record<string, unknown>): Span;
}

/** A span of the task's own: spans started while it is open nest under it. */
export interface Span {
  event(name: string, attributes?: Record<string, unknown>): void;
  error(message: string): void;
  /** Ends it, and those still open inside it. */
  end(): void;
}

/** What a task's function may return: the output, or a snooze or wait. */
export type Result<O> = O | Snooze | Wait;

export interface Task<I, O> {
  readonly __taskbox: 1;
  readonly run: (input: I, ctx: Ctx) => Result<O> | Promise<Result<O>>;
}

/** Marks `fn(input, ctx)` as the task: `export default defineTask(async (input: Input, ctx) => …)`. */
export function defineTask<I = Json, O = Json>(
  fn: (input: I, ctx: Ctx) => Result<O> | Promise<Result<O>>,
): Task<I, O>;

export type Outcome =
  | { kind: "done"; value: string }
  | { kind: "snooze"; value: number }
  | { kind: "wait"; value: string };

/** One attempt from JSON text, as the component runs it (for tests). */
export function runAttempt(task: Task<any, any>, job: Job, inputText: string): Promise<Outcome>;
