//! wordstats: word statistics of a text; the CPU-bound benchmark guest.
//! Input `{"text": string, "top"?: n}` (top defaults to 10); output
//! `{"words", "unique_words", "sentences", "average_word_length", "top": [{"word", "count"}]}`.
//! Words are lowercased runs of alphanumeric characters (Unicode-aware); `top` is ordered by
//! count, ties alphabetically; `average_word_length` counts characters and has two decimals.
//! For `example.json` a test should expect words 30, unique_words 20, sentences 4,
//! average_word_length 4.0, top = the 5, fox 3, does 2, dog 2, lazy 2. Input that does not
//! parse gives `err(bad_input)`.

wit_bindgen::generate!({ path: "../../../wit", world: "task" });

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

#[derive(Deserialize)]
struct Input {
    text: String,
    #[serde(default = "default_top")]
    top: usize,
}

fn default_top() -> usize {
    10
}

#[derive(Serialize, Debug, PartialEq)]
struct Count {
    word: String,
    count: u64,
}

#[derive(Serialize, Debug)]
struct Stats {
    words: u64,
    unique_words: u64,
    sentences: u64,
    average_word_length: f64,
    top: Vec<Count>,
}

fn is_sentence_end(c: char) -> bool {
    matches!(c, '.' | '!' | '?' | '…' | '。' | '！' | '？')
}

fn stats(text: &str, top: usize) -> Stats {
    let mut counts: HashMap<String, u64> = HashMap::new();
    let mut words = 0u64;
    let mut chars = 0u64;
    let mut sentences = 0u64;
    // Words seen since the last sentence end: a run of terminators ends a sentence only if it
    // has words before it, and trailing words without a terminator make a last sentence.
    let mut words_in_sentence = false;
    let mut word = String::new();
    let mut word_chars = 0u64;

    let mut finish_word = |word: &mut String, word_chars: &mut u64| {
        if !word.is_empty() {
            words += 1;
            chars += *word_chars;
            match counts.get_mut(word.as_str()) {
                Some(n) => *n += 1,
                None => {
                    counts.insert(word.clone(), 1);
                }
            }
            word.clear();
            *word_chars = 0;
        }
    };

    for c in text.chars() {
        if c.is_alphanumeric() {
            for l in c.to_lowercase() {
                word.push(l);
            }
            word_chars += 1;
            words_in_sentence = true;
        } else {
            finish_word(&mut word, &mut word_chars);
            if is_sentence_end(c) && words_in_sentence {
                sentences += 1;
                words_in_sentence = false;
            }
        }
    }
    finish_word(&mut word, &mut word_chars);
    if words_in_sentence {
        sentences += 1;
    }

    let unique_words = counts.len() as u64;
    let mut ranked: Vec<(String, u64)> = counts.into_iter().collect();
    ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked.truncate(top);
    let average = if words == 0 { 0.0 } else { (chars as f64 / words as f64 * 100.0).round() / 100.0 };
    Stats {
        words,
        unique_words,
        sentences,
        average_word_length: average,
        top: ranked.into_iter().map(|(word, count)| Count { word, count }).collect(),
    }
}

struct WordStats;

impl Guest for WordStats {
    fn run(_job: Job, input: String) -> Result<Outcome, Failure> {
        let input: Input = serde_json::from_str(&input).map_err(|e| Failure {
            code: "bad_input".into(),
            message: format!("expected {{\"text\": string, \"top\"?: n}}: {e}"),
            retryable: false,
        })?;
        let out = stats(&input.text, input.top);
        let json = serde_json::to_string(&out).map_err(|e| Failure {
            code: "internal".into(),
            message: e.to_string(),
            retryable: false,
        })?;
        Ok(Outcome::Done(json))
    }
}

export!(WordStats);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        let s = stats("The cat. The DOG!! Élan élan... and", 2);
        assert_eq!(s.words, 7);
        assert_eq!(s.unique_words, 5);
        assert_eq!(s.sentences, 4);
        assert_eq!(s.top, vec![Count { word: "the".into(), count: 2 }, Count { word: "élan".into(), count: 2 }]);
    }
}
