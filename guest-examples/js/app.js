// js-article: a taskbox task written in JavaScript (built with jco componentize, world `task`).
//
// Input  {"title": string, "body": string, "words_per_minute"?: number (default 200)}
// Output {"slug", "title", "words", "reading_minutes", "headings": [...], "links": [...]}
//   - headings: the text of every body line that starts with '#' (the #s and spaces removed)
//   - words: runs of letters/digits in the body (a URL counts as one word);
//     reading_minutes = ceil(words / words_per_minute), at least 1 when there are words
//   - links: the http(s) URLs found in the body, in order, without duplicates
// For example.json a test should expect slug "sandboxing-jobs-with-webassembly-components",
// words 40, reading_minutes 1, headings ["Why sandbox jobs?", "Limits", "Résumé"], two links,
// and one info log line.
// Errors: an empty title → err({code: "empty_title", retryable: false}); input that is not
// JSON or a body that is not a string → err({code: "bad_input", retryable: false}).
//
// jco conventions: the world-level export `run` is an exported function; `job` arrives as
// {id, attempt, queue}; returning normally gives `ok(outcome)`, with the outcome variant as
// {tag, val}; throwing a plain {code, message, retryable} object gives `err(failure)` (a thrown
// Error traps instead). Built with `--disable all`, console.log goes nowhere: log via the host.
import { log } from 'taskbox:task/host@0.1.0';

const DEFAULT_WPM = 200;

function fail(code, message) {
  // A plain object, not an Error: jco lowers it into the `failure` record.
  return { code, message, retryable: false };
}

// StarlingMonkey is built without ICU: no String.prototype.normalize and no \p{…} in regular
// expressions. Fold the common Latin letters by table instead.
const FOLD_FROM = 'ÀÁÂÃÄÅàáâãäåÇçĆćČčÈÉÊËèéêëĚěÌÍÎÏìíîïÑñŃńŇňÒÓÔÕÖØòóôõöøŘřŚśŠšŤťÙÚÛÜùúûüŮůÝýÿŹźŻżŽžŁłĐđ';
const FOLD_TO = 'AAAAAAaaaaaaCcCcCcEEEEeeeeEeIIIIiiiiNnNnNnOOOOOOooooooRrSsSsTtUUUUuuuuUuYyyZzZzZzLlDd';
const FOLD_PAIRS = { ß: 'ss', Æ: 'AE', æ: 'ae', Œ: 'OE', œ: 'oe', Þ: 'TH', þ: 'th' };

function fold(text) {
  let out = '';
  for (const ch of text) {
    const i = FOLD_FROM.indexOf(ch);
    out += i >= 0 ? FOLD_TO[i] : (FOLD_PAIRS[ch] ?? ch);
  }
  return out;
}

function slugify(title) {
  return fold(title)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 80)
    .replace(/-+$/, '');
}

// A word is a run of letters and digits: ASCII ones and the letter blocks of the Basic
// Multilingual Plane (Latin, Greek, Cyrillic, …, kana, CJK, Hangul), leaving out whitespace,
// punctuation and symbol blocks; an apostrophe between two runs (don't, l’homme) keeps one word.
const LETTERS =
  '0-9A-Za-z\u00AA\u00B5\u00BA\u00C0-\u00D6\u00D8-\u00F6\u00F8-\u167F\u1681-\u1FFF' +
  '\u2C00-\u2DFF\u2E80-\u2FDF\u3040-\uD7FF\uF900-\uFDFF\uFE70-\uFEFE' +
  '\uFF10-\uFF19\uFF21-\uFF3A\uFF41-\uFF5A\uFF66-\uFFDC';
const WORD = new RegExp(`[${LETTERS}]+(?:['’][${LETTERS}]+)*`, 'g');

function countWords(text) {
  const words = text.match(WORD);
  return words ? words.length : 0;
}

function headings(body) {
  const found = [];
  for (const line of body.split(/\r?\n/)) {
    const trimmed = line.trimStart();
    if (trimmed.startsWith('#')) {
      const text = trimmed.replace(/^#+/, '').trim();
      if (text) found.push(text);
    }
  }
  return found;
}

const URL_RE = /https?:\/\/[^\s<>()\[\]"'`]+/g;

function links(body) {
  const seen = new Set();
  for (const match of body.matchAll(URL_RE)) {
    const url = match[0].replace(/[.,;:!?]+$/, '');
    seen.add(url);
  }
  return [...seen];
}

export function run(job, input) {
  let article;
  try {
    article = JSON.parse(input);
  } catch (e) {
    throw fail('bad_input', `input is not JSON: ${e}`);
  }
  if (article === null || typeof article !== 'object') {
    throw fail('bad_input', 'input must be a JSON object');
  }
  const { title, body, words_per_minute: wpm = DEFAULT_WPM } = article;
  if (typeof title !== 'string' || title.trim() === '') {
    throw fail('empty_title', 'title must not be empty');
  }
  if (typeof body !== 'string') {
    throw fail('bad_input', 'body must be a string');
  }
  if (typeof wpm !== 'number' || !(wpm > 0)) {
    throw fail('bad_input', 'words_per_minute must be a positive number');
  }
  // A URL is read as one word, not as its pieces.
  const words = countWords(body.replace(URL_RE, ' link '));
  const out = {
    slug: slugify(title),
    title: title.trim(),
    words,
    reading_minutes: words === 0 ? 0 : Math.max(1, Math.ceil(words / wpm)),
    headings: headings(body),
    links: links(body),
  };
  log('info', `job ${job.id} attempt ${job.attempt}: article "${out.slug}", ${words} words`);
  return { tag: 'done', val: JSON.stringify(out) };
}
