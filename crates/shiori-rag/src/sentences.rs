//! Short extractive answers: the sentences of the best source that answer the question. A
//! sentence scores the question terms it contains (English words by their stems: "laptops" is
//! "laptop"), each weighted by how rare it is among the source's sentences (an inverse document
//! frequency over this answer's own candidates, so a word every sentence shares counts for
//! little), those of the headings its chunk lies under that set it apart from the other sources
//! read as if it held them too, and, with the corpus's embedder, how near its meaning is to the
//! question's ([`Meaning`]); the two, each standardised over the source's sentences, weigh the
//! same. A
//! row whose range covers a quantity the question states ("2km以上10km未満" for "片道5km")
//! holds it as it would the question's rarest word ([`crate::case`]). A question asking whether
//! a thing exists ("is there a home office stipend?"), or an amount for a specific case ("how
//! many days of paid leave for our own wedding?"), is refused when no sentence or title of the
//! sources read names the thing or the case ([`NotQuoted::NotMentioned`]).
//! Sentences, list items and table rows are candidates; a question line of an FAQ, a line
//! that is only a link or a sentence about its page ("This page outlines …") is context, never
//! the answer. A source none of whose sentences shares a word of the question gives way to the
//! next one that does. When the question asks for an amount, a number or a time
//! ([`crate::asked`]), a sentence that states one comes before one that only shares the
//! question's words, a source whose sentences state none gives way to the next one that does,
//! and an amount or a number that no sentence on the topic of any source read states is a
//! refusal ([`NotQuoted::NotStated`]). The best sentence is always
//! quoted, with its list (the line introducing the item, or the items a line introduces; all of
//! them when the question asks how to do something); the next best join it (only those that
//! state what was asked, when the best does), in reading order, while the answer stays within
//! what a reader takes in at a glance ([`ANSWER_COLUMNS`]) — a Japanese answer often needs the
//! sentence next to the one that restates the question
//! ("…場合がある。このような梅雨を空梅雨という。").

use crate::asked::{
    amount_specifics, asked, asked_things, asks_for_steps, holds_a_name, states, without_list_mark,
    Asked, Thing,
};
use crate::case::{covers_any, quantities, Quantity};
use crate::meaning::{Meaning, Nearness};
use shiori_analysis::text::{sentence_ranges, stemmed_terms};
use shiori_analysis::{detect_script, Script};
use shiori_core::Source;
use std::collections::{HashMap, HashSet};
use std::f64::consts::LN_2;
use std::ops::Range;

/// The length an extracted answer stays within, in display columns (a CJK character takes two):
/// two lines of a terminal, 150 Japanese characters or about fifty English words.
pub(crate) const ANSWER_COLUMNS: usize = 300;

/// The length in characters (a CJK character counts one) up to which sentences further from
/// the question than the source's average, and not beside the best one, still join an answer:
/// the length a reader expects of an answer. Against joining them up to [`ANSWER_COLUMNS`]:
/// handbook-en-dev 0.638 → 0.649 of questions right, its median answer 267 → 236 characters,
/// no set worse.
const FILLER_CHARACTERS: usize = 200;

/// Sources read for a sentence that states what the question asks for: the retriever's first
/// few, so a chunk that only restates the question does not hide the answer in the next one.
const SOURCES_READ: usize = 3;

/// An answer made of sentences quoted from one source.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Extracted {
    /// The index of the quoted source.
    pub source: usize,
    /// The quoted sentences' byte ranges in the source's text, in reading order.
    pub quotes: Vec<Range<usize>>,
}

struct Candidate {
    range: Range<usize>,
    terms: HashSet<String>,
    /// It states the kind of thing the question asks for.
    states_asked: bool,
    /// It states a range that covers a quantity of the question ([`crate::case`]).
    covers_case: bool,
}

/// Why no sentence is quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotQuoted {
    /// The sources have no sentence at all.
    Nothing,
    /// The question asks for this kind of thing and no sentence of the sources read that is on
    /// the question's topic states one: the pages on the topic do not say it.
    NotStated(Asked),
    /// The question asks after this thing (whether it exists, or an amount for it) and no
    /// sentence or title of the sources read names it ([`crate::asked::Thing`]).
    NotMentioned(String),
}

/// The sentences of the best of `sources` that answer `question`. Without an embedder
/// (`meaning`), the retriever's best source is read first: it ranked whole chunks with both
/// retrievers, which a sentence's shared words cannot overrule (quoting from the best of the
/// top three by shared words answered 1.1 points less of jsquad-valid than from the best
/// alone); only a source none of whose sentences shares a word of the question gives way. With
/// one, a later source's best sentence is quoted instead when it is nearer the question in
/// meaning and holds as many of its words ([`Ranked::beats`]): the answer is often in the
/// chunk after the one that names the topic (against quoting the best source alone, both
/// weighed by meaning: handbook-en-dev 0.562 → 0.616 of questions right, handbook-ja-dev 0.556
/// → 0.585, jsquad-valid 0.859 → 0.863). When the question asks
/// for an amount, a number or a time, only a source that states one in a sentence on the
/// question's topic (sharing its words, or beside the one sharing the most) is quoted; when
/// none of the [`SOURCES_READ`] does so for an amount or a number, nothing is: the realistic
/// unanswerable question is on the documents' own topic (the benefits page exists, but states
/// no amount for what was asked), and quoting the topic's sentences, or a number stated about
/// something else, answered none of them.
pub(crate) fn extract(
    question: &str,
    sources: &[Source],
    meaning: Option<&Meaning>,
) -> Result<Extracted, NotQuoted> {
    let question = Question::new(question);
    // A yes or a no is read from the best source's file only: a "no" on another page is about
    // something else ("No, don't save hours" for "can I shift my hours for a holiday?").
    let read: Vec<(usize, &Source)> = sources
        .iter()
        .enumerate()
        .take(SOURCES_READ)
        .filter(|(_, source)| {
            question.wanted != Some(Asked::Ruling) || file_of(source) == file_of(&sources[0])
        })
        .collect();
    if let Some(thing) = unmentioned(&question, &sources[..sources.len().min(SOURCES_READ)]) {
        return Err(NotQuoted::NotMentioned(thing));
    }
    let mut ranked = rank_all(&question, &read, meaning).into_iter();
    let quoted = |index: usize, ranked: &Ranked| Extracted {
        source: index,
        quotes: ranked.quotes(&sources[index].text),
    };
    let mut first_found: Option<(usize, Ranked)> = None;
    let mut answering: Option<(usize, Ranked)> = None;
    for (index, _) in &read {
        let Some(ranked) = ranked.next().flatten() else {
            continue;
        };
        if ranked.answers_it() || (question.wanted.is_none() && ranked.on_the_topic()) {
            if meaning.is_none() {
                return Ok(quoted(*index, &ranked));
            }
            let better = answering
                .as_ref()
                .is_none_or(|(_, known)| ranked.beats(known));
            if better {
                answering = Some((*index, ranked));
            }
            continue;
        }
        first_found.get_or_insert((*index, ranked));
    }
    if let Some((index, ranked)) = answering {
        return Ok(quoted(index, &ranked));
    }
    let Some((index, best)) = first_found else {
        return Err(NotQuoted::Nothing);
    };
    // "When" is answered by an event ("once your manager approves") as often as by a date; a
    // yes or a no is often said without a word of one ("Term renewals happen on request"):
    // only an amount or a number is refused when no sentence on the topic states one.
    match question.wanted {
        Some(wanted @ (Asked::Amount | Asked::Number)) => Err(NotQuoted::NotStated(wanted)),
        _ => Ok(quoted(index, &best)),
    }
}

/// What the question asks after that no sentence or title of `read` names (none of a group's
/// alternatives): the thing it asks whether there is, or what an amount it asks for is specific
/// to. A source in the other language than the question's, which names nothing in its words,
/// counts as naming everything.
fn unmentioned(question: &Question, read: &[Source]) -> Option<String> {
    if question.asked_after.is_empty()
        || read
            .iter()
            .any(|source| detect_script(&source.text) != question.script)
    {
        return None;
    }
    let sentences: Vec<HashSet<String>> = read
        .iter()
        .flat_map(|source| {
            std::iter::once(source.title.as_str()).chain(
                sentence_ranges(&source.text)
                    .into_iter()
                    .map(|range| &source.text[range]),
            )
        })
        .map(stemmed_terms)
        .collect();
    let named = |thing: &Thing| sentences.iter().any(|terms| thing.is_named_by(terms));
    question
        .asked_after
        .iter()
        .find(|alternatives| !alternatives.iter().any(named))
        .map(|alternatives| alternatives[0].name.clone())
}

/// Each read source's candidates ranked (`None` for a source without any); the candidates of
/// all of them are embedded in one batch.
fn rank_all(
    question: &Question,
    read: &[(usize, &Source)],
    meaning: Option<&Meaning>,
) -> Vec<Option<Ranked>> {
    let headings = distinguishing_headings(read);
    let each: Vec<Vec<Candidate>> = read
        .iter()
        .map(|(_, source)| candidates_of(question, &source.text))
        .collect();
    let near = meaning.and_then(|meaning| nearness(meaning, read, &each));
    let mut offset = 0;
    each.into_iter()
        .zip(read)
        .zip(&headings)
        .map(|((candidates, (_, source)), heading)| {
            let span = offset..offset + candidates.len();
            offset = span.end;
            let near = near.as_ref().map(|near| &near[span]);
            Ranked::new(question, &source.text, candidates, near, heading)
        })
        .collect()
}

/// The terms of each read source's title (its page's title and the headings above the chunk)
/// that not every read source's title holds: what sets the part of a page a chunk lies in apart
/// from the others read ("労災保険関係 › 法定の保管義務" above "完結の日から3年間。", beside
/// "雇用保険関係 › 法定の保管義務"). Every sentence of a chunk is on the topic its headings
/// name, as a table row is on its header's.
fn distinguishing_headings(read: &[(usize, &Source)]) -> Vec<HashSet<String>> {
    let titles: Vec<HashSet<String>> = read
        .iter()
        .map(|(_, source)| stemmed_terms(&source.title))
        .collect();
    let shared: HashSet<&String> = titles
        .iter()
        .flatten()
        .filter(|term| titles.iter().all(|title| title.contains(*term)))
        .collect();
    titles
        .iter()
        .map(|title| {
            title
                .iter()
                .filter(|term| !shared.contains(term))
                .cloned()
                .collect()
        })
        .collect()
}

/// Every candidate's nearness in meaning to the question, all the sources' in one batch (each
/// read under its source's title); `None` when the embedder fails.
fn nearness(
    meaning: &Meaning,
    read: &[(usize, &Source)],
    each: &[Vec<Candidate>],
) -> Option<Vec<Nearness>> {
    let texts: Vec<(&str, &str)> = each
        .iter()
        .zip(read)
        .flat_map(|(candidates, (_, source))| {
            candidates
                .iter()
                .map(|candidate| (source.title.as_str(), &source.text[candidate.range.clone()]))
        })
        .collect();
    meaning.nearness(&texts)
}

/// The answer candidates of a source's text: its sentences, list items and table rows that can
/// be an answer ([`is_answer_line`]).
fn candidates_of(question: &Question, text: &str) -> Vec<Candidate> {
    let mut candidates: Vec<Candidate> = sentence_ranges(text)
        .into_iter()
        .filter(|range| is_answer_line(&text[range.clone()]))
        .map(|range| {
            let sentence = &text[range.clone()];
            Candidate {
                terms: stemmed_terms(sentence),
                states_asked: match question.wanted {
                    Some(Asked::Name) => holds_a_name(sentence, &question.newest),
                    Some(wanted) => states(sentence, wanted),
                    None => false,
                },
                covers_case: covers_any(sentence, &question.quantities),
                range,
            }
        })
        .collect();
    // An item that is no sentence of its own completes the line ending in a colon above it,
    // and states what that line states ("Three to five weeks in advance for:" above
    // "Conferences that cost more than $2,500"). Below a line that is a sentence
    // (「次のとおり減額する。」) each item says its own.
    for item in 0..candidates.len() {
        let fragment = !is_sentence(&text[candidates[item].range.clone()]);
        let intro = list_intro(&candidates, text, item).filter(|&intro| {
            fragment
                && text[candidates[intro].range.clone()]
                    .trim_end()
                    .ends_with([':', '：'])
        });
        if intro.is_some_and(|intro| candidates[intro].states_asked) {
            candidates[item].states_asked = true;
        }
    }
    candidates
}

/// The file a source's document came from: a page, slide or sheet adds `#part` to its id.
fn file_of(source: &Source) -> &str {
    source
        .doc_id
        .split_once('#')
        .map_or(source.doc_id.as_str(), |(file, _)| file)
}

/// What the sentences of every source read are scored against, taken from the question once.
struct Question {
    /// The terms of the newest question. A follow-up comes first, the questions before it
    /// after (one per line): the new question decides, the earlier ones only break its ties.
    newest: HashSet<String>,
    all: HashSet<String>,
    wanted: Option<Asked>,
    /// The newest question's script: a source in the other one shares none of its words.
    script: Script,
    /// The question asks how to do something ([`asks_for_steps`]).
    steps: bool,
    /// The quantities the newest question states its case with ("5 years").
    quantities: Vec<Quantity>,
    /// What the newest question asks after: the thing it asks whether there is
    /// ([`asked_things`]) and what an amount it asks for is specific to
    /// ([`amount_specifics`]); each a group of alternatives a source must name one of.
    asked_after: Vec<Vec<Thing>>,
}

impl Question {
    fn new(question: &str) -> Question {
        let newest = question.lines().next().unwrap_or_default();
        Question {
            newest: stemmed_terms(newest),
            all: stemmed_terms(question),
            wanted: asked(newest),
            script: detect_script(newest),
            steps: asks_for_steps(&newest.to_lowercase()),
            quantities: quantities(newest),
            asked_after: asked_things(newest)
                .into_iter()
                .chain(amount_specifics(newest))
                .collect(),
        }
    }
}

/// Which candidates state what is asked on the question's topic: sharing its words (`newest`,
/// each candidate's weight of them), or, when none that states it does, beside the one sharing
/// the most: the amount often follows the sentence that names the topic ("…Administrative Leave
/// in order to vote." "You can receive up to 4 hours for each election event."). A follow-up
/// none of whose words the source holds ("how quickly?") names no topic of its own: the
/// questions before it (`earlier`) name the one it asks about. In the other language than the
/// question's, every candidate is on the topic the retrievers' embedding found.
fn stating_on_topic(
    candidates: &[Candidate],
    newest: &[f64],
    earlier: &[f64],
    across_languages: bool,
) -> Vec<bool> {
    let topical = match newest.iter().all(|&weight| weight == 0.0) {
        true => earlier,
        false => newest,
    };
    let closest = (0..topical.len())
        .max_by(|&a, &b| topical[a].total_cmp(&topical[b]).then(b.cmp(&a)))
        .filter(|&best| topical[best] > 0.0);
    let stated_with_words =
        (0..candidates.len()).any(|index| candidates[index].states_asked && topical[index] > 0.0);
    (0..candidates.len())
        .map(|index| {
            candidates[index].states_asked
                && (across_languages
                    || topical[index] > 0.0
                    || (!stated_with_words
                        && closest.is_some_and(|best| best.abs_diff(index) == 1)))
        })
        .collect()
}

/// What ranks a candidate, first to last, and what compares it with another source's.
#[derive(Clone, Copy)]
struct Score {
    /// It states what is asked (and is on the question's topic).
    states: bool,
    /// It states what is asked on the topic its own words name, not only its headings'.
    states_in_words: bool,
    /// Nearness in meaning and the newest question's words' weight, each standardised over the
    /// source's candidates; 0 without an embedder.
    blend: f64,
    /// The weight of the newest question's words it holds.
    newest: f64,
    /// The weight of all the questions' words it holds.
    earlier: f64,
    /// Its nearness in meaning to the question as retrieval searched it (0 without an
    /// embedder), which compares it with another source's.
    near: f64,
    /// How many of the newest question's words it holds.
    shared: usize,
}

impl Score {
    /// `other` against `self`: `Less` when `other` ranks first.
    fn ranks(&self, other: &Score) -> std::cmp::Ordering {
        self.states
            .cmp(&other.states)
            .then(self.blend.total_cmp(&other.blend))
            .then(self.newest.total_cmp(&other.newest))
            .then(self.earlier.total_cmp(&other.earlier))
    }
}

/// A source's answer candidates ranked by the question's words and meaning.
struct Ranked {
    candidates: Vec<Candidate>,
    scores: Vec<Score>,
    /// Candidate indexes, best first.
    order: Vec<usize>,
    /// A yes or a no is asked: sentences without a word of one still join the best one, since
    /// the answer may read as a plain statement ("Monthly plans can be refunded within 14
    /// days" for "Can I get a refund?").
    ruling: bool,
    /// Steps are asked for: the best candidate's list is quoted whole, a procedure cut off
    /// after its first steps leaves the reader stuck at the one that matters ("…type terminal
    /// and hit enter" without "sudo killall coreaudiod").
    steps: bool,
    /// The source is in the other language than the question's ([`Question::script`]).
    across_languages: bool,
}

impl Ranked {
    /// `None` when `candidates` is empty. `near`: each candidate's nearness in meaning to the
    /// question, when an embedder gives it.
    fn new(
        question: &Question,
        text: &str,
        candidates: Vec<Candidate>,
        near: Option<&[Nearness]>,
        heading: &HashSet<String>,
    ) -> Option<Ranked> {
        if candidates.is_empty() {
            return None;
        }
        let weights = rarity(&candidates);
        // A word of the headings the chunk lies under ("労災保険関係 › 法定の保管義務" above
        // "完結の日から3年間。") is one each of its sentences holds: every sentence is read under
        // them, as the embedder reads it under its title.
        let score = |asked: &HashSet<String>, candidate: &Candidate, heading: &HashSet<String>| {
            asked
                .iter()
                .map(|term| match weights.get(term.as_str()) {
                    Some(weight) if candidate.terms.contains(term) => *weight,
                    _ if heading.contains(term) => LN_2,
                    _ => 0.0,
                })
                .sum::<f64>()
        };
        // The row whose range covers the question's case ("2km以上10km未満" for "5km") holds
        // what the question says of itself, as rarely as a word one candidate holds.
        let rarest = (1.0 + candidates.len() as f64).ln();
        let case = |candidate: &Candidate| match candidate.covers_case {
            true => rarest,
            false => 0.0,
        };
        let words = |asked: &HashSet<String>, heading: &HashSet<String>| -> Vec<f64> {
            candidates
                .iter()
                .map(|candidate| score(asked, candidate, heading) + case(candidate))
                .collect()
        };
        let newest = words(&question.newest, heading);
        // Meaning and shared words, each standardised over the source's candidates, weigh the
        // same: the embedder finds the answer a colloquial question paraphrases, the words the
        // one a question copies.
        let blend: Vec<f64> = match near {
            Some(near) => standard(&near.iter().map(|near| near.newest).collect::<Vec<_>>())
                .iter()
                .zip(standard(&newest))
                .map(|(a, b)| a + b)
                .collect(),
            None => vec![0.0; candidates.len()],
        };
        let earlier = words(&question.all, heading);
        // A source in the other language than the question's shares none of its words: the
        // retrievers' embedding put it on the topic, and every sentence is as near as any.
        let across_languages = detect_script(text) != question.script;
        let stating = stating_on_topic(&candidates, &newest, &earlier, across_languages);
        // A sentence on the topic by its headings alone leads when it states what is asked, but
        // does not join one that does: beside the answer it is another fact of the page
        // ("Visitors must be registered by 17:00" after "The office is open from 8:00 to 21:00").
        let stating_in_words = match heading.is_disjoint(&question.all) {
            true => stating.clone(),
            false => {
                let unheaded = HashSet::new();
                stating_on_topic(
                    &candidates,
                    &words(&question.newest, &unheaded),
                    &words(&question.all, &unheaded),
                    across_languages,
                )
            }
        };
        let scores: Vec<Score> = candidates
            .iter()
            .enumerate()
            .map(|(index, candidate)| Score {
                states: stating[index],
                states_in_words: stating_in_words[index],
                blend: blend[index],
                newest: newest[index],
                earlier: earlier[index],
                near: near.map_or(0.0, |near| near[index].searched),
                shared: question.newest.intersection(&candidate.terms).count()
                    + usize::from(candidate.covers_case),
            })
            .collect();
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        // Stable: among equal scores the earlier sentence stays first.
        order.sort_by(|&a, &b| scores[b].ranks(&scores[a]));
        Some(Ranked {
            candidates,
            scores,
            order,
            ruling: question.wanted == Some(Asked::Ruling),
            steps: question.steps,
            across_languages,
        })
    }

    /// Whether a candidate (or a heading the chunk lies under) shares a word of the newest
    /// question, or the source is in the other language, where none can.
    fn on_the_topic(&self) -> bool {
        self.across_languages || self.scores.iter().any(|score| score.newest > 0.0)
    }

    /// Whether this source's best candidate beats `other`'s: nearer the question in meaning,
    /// holding as many of its words. Neither alone may overrule the retriever's order of the
    /// chunks: nearness alone moved the answer of a question that copies its paragraph's words
    /// to a paragraph that shares fewer (jsquad-valid), shared words alone to one that repeats
    /// the question (handbook-ja-dev).
    fn beats(&self, other: &Ranked) -> bool {
        let (mine, theirs) = (self.scores[self.order[0]], other.scores[other.order[0]]);
        mine.near > theirs.near && mine.shared >= theirs.shared
    }

    /// Whether the best candidate states what is asked (and shares a word of the question).
    fn answers_it(&self) -> bool {
        self.scores[self.order[0]].states
    }

    /// The ranges to quote, in reading order: the best candidate always, with its list (the
    /// line that introduces it, or the items it introduces), then the next best while the
    /// answer stays within [`ANSWER_COLUMNS`] — and, for a sentence that is neither next to
    /// the best one nor nearer the question than the source's average, within
    /// [`FILLER_CHARACTERS`].
    fn quotes(&self, text: &str) -> Vec<Range<usize>> {
        let lead = self.order[0];
        let answers_it = self.answers_it() && !self.ruling;
        let sentence = |index: usize| &text[self.candidates[index].range.clone()];
        let columns_of = |index: usize| columns(sentence(index));
        let characters_of = |index: usize| sentence(index).chars().count();
        let mut chosen = vec![lead];
        let mut used = columns_of(lead);
        let mut characters = characters_of(lead);
        for index in self.list_of(lead, text) {
            if used + columns_of(index) > ANSWER_COLUMNS && !self.steps {
                break;
            }
            chosen.push(index);
            used += columns_of(index);
            characters += characters_of(index);
        }
        for &index in &self.order {
            // Once a sentence states what was asked, one that does not would only restate the
            // question beside it. (A sentence that shares no word with the question still
            // joins when there is room: the answer often does not repeat the question's
            // words, and leaving such sentences out cost faq-natural-en 2 of 34 right answers.)
            if chosen.contains(&index) || (answers_it && !self.scores[index].states_in_words) {
                continue;
            }
            // A line that introduces a list says nothing without its items ("A few things to
            // remember:"), nor one broken off at a comma without the line after it; each comes
            // only as the best candidate, with them.
            if introduces(sentence(index)) || self.breaks_off(index, text) {
                continue;
            }
            // A sentence below the source's average that is not beside the best one is filler
            // more often than the answer: it fills a short answer, never a long one.
            let filler = self.scores[index].blend < 0.0 && index.abs_diff(lead) != 1;
            if filler && characters + characters_of(index) > FILLER_CHARACTERS {
                continue;
            }
            if used + columns_of(index) <= ANSWER_COLUMNS {
                chosen.push(index);
                used += columns_of(index);
                characters += characters_of(index);
            }
        }
        chosen.sort_unstable();
        chosen
            .into_iter()
            .map(|index| self.candidates[index].range.clone())
            .collect()
    }

    /// The lines that make `lead` readable as part of a list: the line that introduces the
    /// list item `lead` is (`Three to five weeks in advance for:` above `Conferences that cost
    /// more than $2,500`), or the items that follow a `lead` introducing them
    /// (`…以下の事項を届け出なければならない。` above `1. 受診する病院`), nearest first; for a
    /// line that breaks off at a comma (`To initiate your request,`), the line completing it. When
    /// steps are asked for, an item comes with its whole list: the step nearest the question
    /// ("Click on the Mac search tool") is one of several the reader needs.
    fn list_of(&self, lead: usize, text: &str) -> Vec<usize> {
        let on_own_line = |index: usize| starts_line(text, self.candidates[index].range.start);
        let sentence = |index: usize| &text[self.candidates[index].range.clone()];
        let items_after = |intro: usize| {
            (intro + 1..self.candidates.len())
                .take_while(|&index| on_own_line(index) && is_item(sentence(index)))
                .collect::<Vec<usize>>()
        };
        if introduces(sentence(lead)) {
            return items_after(lead);
        }
        // A marked item's own lines follow it unmarked: the row of a table under it
        // (`3. 週所定労働日数が3日の従業員` above `0.5年: 5日 · 1.5年: 6日`), a nested list's lines.
        let own: Vec<usize> = match has_list_mark(sentence(lead)) {
            true => (lead + 1..self.candidates.len())
                .take_while(|&index| {
                    on_own_line(index)
                        && !has_list_mark(sentence(index))
                        && !is_sentence(sentence(index))
                })
                .collect(),
            false => Vec::new(),
        };
        let around: Vec<usize> = match list_intro(&self.candidates, text, lead) {
            Some(intro) if self.steps => std::iter::once(intro)
                .chain(items_after(intro).into_iter().filter(|&item| item != lead))
                .collect(),
            None if self.breaks_off(lead, text) => {
                (lead + 1..self.candidates.len()).take(1).collect()
            }
            intro => intro.into_iter().collect(),
        };
        let more: Vec<usize> = around
            .into_iter()
            .filter(|index| !own.contains(index))
            .collect();
        own.into_iter().chain(more).collect()
    }

    /// Whether a candidate that is no item of a list breaks off at a comma, its sentence going
    /// on in the next line (`To initiate your request,`).
    fn breaks_off(&self, index: usize, text: &str) -> bool {
        text[self.candidates[index].range.clone()]
            .trim_end()
            .ends_with([',', '、', '，'])
            && list_intro(&self.candidates, text, index).is_none()
    }
}

/// The line that introduces the list `item` is an item of, when it is one: the nearest line
/// above that introduces, with only lines between.
fn list_intro(candidates: &[Candidate], text: &str, item: usize) -> Option<usize> {
    let on_own_line = |index: usize| starts_line(text, candidates[index].range.start);
    if !on_own_line(item) {
        return None;
    }
    (0..item)
        .rev()
        .take(LIST_ITEMS)
        .take_while(|&index| on_own_line(index))
        .find(|&index| introduces(&text[candidates[index].range.clone()]))
}

/// How many lines above an item its list's introducing line may be.
const LIST_ITEMS: usize = 12;

/// Whether the text before `start` ends a line: the sentence at `start` begins one.
fn starts_line(text: &str, start: usize) -> bool {
    let before = text[..start].trim_end_matches([' ', '\t']);
    before.is_empty() || before.ends_with('\n')
}

/// Whether a line reads as a list item: it starts with a list mark or a number, or it is no
/// sentence (it ends without a full stop), and it introduces no list of its own.
fn is_item(line: &str) -> bool {
    let trimmed = line.trim();
    let marked = trimmed.starts_with(LIST_BULLETS)
        || trimmed.starts_with(|c: char| c.is_ascii_digit() || ('①'..='⑳').contains(&c));
    (marked || !is_sentence(trimmed)) && !introduces(trimmed)
}

/// The marks a bulleted list's items open with.
const LIST_BULLETS: [char; 9] = ['•', '・', '●', '○', '■', '-', '*', '–', '※'];

/// Whether a line opens with a list's mark: a bullet, or a number or circled number that
/// [`without_list_mark`] takes off (`3. `, not the `0.5年` a table row opens with).
fn has_list_mark(line: &str) -> bool {
    line.trim_start().starts_with(LIST_BULLETS) || without_list_mark(line).len() < line.len()
}

/// Whether a line ends as a sentence does, with a full stop.
fn is_sentence(line: &str) -> bool {
    line.trim_end().ends_with(['。', '.', '！', '!'])
}

/// Whether a sentence introduces the lines after it: it ends with a colon, or points at what
/// follows (`the following`, `以下の`, `次のとおり`, `下記の`).
fn introduces(sentence: &str) -> bool {
    let trimmed = sentence.trim_end();
    trimmed.ends_with([':', '：'])
        || [
            "the following",
            "以下の",
            "以下のとおり",
            "次のとおり",
            "次の事項",
            "下記の",
        ]
        .iter()
        .any(|marker| trimmed.contains(marker))
}

/// Keys of a page's front matter: a line that starts with one of them and a colon is the page's
/// settings, printed as text when the page was converted to another format, not an answer.
const FRONT_MATTER_KEYS: [&str; 12] = [
    "title",
    "layout",
    "permalink",
    "redirect_from",
    "keywords",
    "tags",
    "categories",
    "sidebar",
    "weight",
    "aliases",
    "lastmod",
    "translator",
];

/// Openings of a sentence that says what its page is about ("This page outlines how to sign up
/// for and how to cancel the transit benefit.", 「本章では…を説明する。」), lower-cased.
const ABOUT_THE_PAGE: [&str; 18] = [
    "this page ",
    "this section ",
    "this guide ",
    "this document ",
    "this article ",
    "this chapter ",
    "on this page",
    "in this section",
    "in this guide",
    "in this document",
    "このページでは",
    "このページは",
    "本ページは",
    "本章では",
    "本書は",
    "本書では",
    "このドキュメントは",
    "本ドキュメントは",
];

/// Whether a sentence can be an answer: not a question (an FAQ's question line, which shares
/// every word of a question about it), not a line that is only a link, not a front matter line,
/// not a sentence about the page itself (it names the page's topic in the question's words,
/// and says nothing of it).
fn is_answer_line(sentence: &str) -> bool {
    let trimmed = sentence.trim();
    // Compared in place: every candidate of every source read passes here.
    let about_the_page = ABOUT_THE_PAGE.iter().any(|opening| {
        trimmed
            .get(..opening.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(opening))
    });
    if about_the_page {
        return false;
    }
    let front_matter = trimmed
        .split_once(':')
        .is_some_and(|(key, _)| FRONT_MATTER_KEYS.contains(&key.trim()));
    if front_matter {
        return false;
    }
    let question = trimmed.ends_with(['?', '？'])
        || ["Q:", "Q.", "Q：", "Q．", "質問:", "質問："]
            .iter()
            .any(|mark| trimmed.starts_with(mark));
    let link_only = !trimmed.contains(' ')
        && (trimmed.starts_with("http://") || trimmed.starts_with("https://"));
    !(question || link_only)
}

/// Each term's weight: ln(1 + n / sentences containing it), over the `n` candidates.
fn rarity(candidates: &[Candidate]) -> HashMap<&str, f64> {
    let mut containing: HashMap<&str, usize> = HashMap::new();
    for candidate in candidates {
        for term in &candidate.terms {
            *containing.entry(term.as_str()).or_default() += 1;
        }
    }
    let n = candidates.len() as f64;
    containing
        .into_iter()
        .map(|(term, count)| (term, (1.0 + n / count as f64).ln()))
        .collect()
}

/// `values` as standard scores (0 mean, unit spread), all 0 when they are all equal: a
/// cosine and a sum of word weights are on different scales, and only their order within a
/// source's sentences matters.
fn standard(values: &[f64]) -> Vec<f64> {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let spread = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt();
    values
        .iter()
        .map(|v| {
            if spread > 0.0 {
                (v - mean) / spread
            } else {
                0.0
            }
        })
        .collect()
}

/// Display columns: East Asian wide and full-width characters take two, the rest one.
fn columns(text: &str) -> usize {
    text.chars()
        .map(|c| match c {
            '\u{1100}'..='\u{115f}'
            | '\u{2e80}'..='\u{a4cf}'
            | '\u{ac00}'..='\u{d7a3}'
            | '\u{f900}'..='\u{faff}'
            | '\u{fe30}'..='\u{fe4f}'
            | '\u{ff00}'..='\u{ff60}'
            | '\u{ffe0}'..='\u{ffe6}' => 2,
            _ => 1,
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::source;

    /// A text's candidates ranked by the question's words alone, under no headings.
    fn ranked_by_words(question: &Question, text: &str) -> Ranked {
        Ranked::new(
            question,
            text,
            candidates_of(question, text),
            None,
            &HashSet::new(),
        )
        .unwrap()
    }

    fn quoted(question: &str, sources: &[Source]) -> Vec<String> {
        let found = extract(question, sources, None).unwrap();
        let text = &sources[found.source].text;
        found
            .quotes
            .into_iter()
            .map(|range| text[range].to_string())
            .collect()
    }

    #[test]
    fn quotes_the_sentence_that_holds_the_asked_terms_first() {
        let long = "Filler ".repeat(50);
        let sources = [source(
            "API rate limits",
            &format!(
                "The REST API allows 600 requests per minute on the Business plan. {long}. \
                 Starter plan keys are limited to 100 requests per minute."
            ),
        )];
        assert_eq!(
            quoted("What about the Starter plan rate limit?", &sources),
            [
                "The REST API allows 600 requests per minute on the Business plan.",
                "Starter plan keys are limited to 100 requests per minute."
            ],
            "within the budget, in reading order, the filler left out"
        );
    }

    #[test]
    fn the_best_sentence_is_quoted_even_when_it_alone_is_long() {
        let long = format!("Starter plan {}.", "limits ".repeat(60));
        let sources = [source("limits", &format!("{long} Business is 600."))];
        assert_eq!(quoted("Starter plan limits?", &sources), [long.as_str()]);
    }

    #[test]
    fn a_japanese_answer_takes_the_sentence_after_the_one_that_restates_the_question() {
        let sources = [source(
            "梅雨",
            "梅雨の期間中ほとんど雨が降らない場合がある。このような梅雨のことを空梅雨という。",
        )];
        assert_eq!(
            quoted("梅雨の期間中ほとんど雨が降らない場合を何と呼ぶ？", &sources),
            [
                "梅雨の期間中ほとんど雨が降らない場合がある。",
                "このような梅雨のことを空梅雨という。"
            ]
        );
    }

    #[test]
    fn question_lines_bare_links_front_matter_and_page_descriptions_are_never_the_answer() {
        let sources = [source(
            "FAQ",
            "title: Lost badge\nkeywords: badge, lost\nQ: What do I do if I lose my badge?\n\
             https://security.example/badge\nThis page explains what to do if you lose your \
             badge.\nReport it to Security within 24 hours.",
        )];
        assert_eq!(
            quoted("What do I do if I lose my badge?", &sources),
            ["Report it to Security within 24 hours."]
        );
    }

    #[test]
    fn a_sentence_stating_the_asked_amount_leads_and_a_later_source_may_hold_it() {
        let sources = [source(
            "Home office",
            &format!(
                "The home office budget covers desks, chairs and monitors. {}. \
                 The home office budget is $500 per year.",
                "filler words ".repeat(30)
            ),
        )];
        assert_eq!(
            quoted("How much is the home office budget?", &sources)[0],
            "The home office budget is $500 per year."
        );
        let sources = [
            source("Leave", "Paid leave is granted by your manager."),
            source("Leave days", "You get 20 days of paid leave a year."),
        ];
        let found = extract("How many days of paid leave do I get?", &sources, None).unwrap();
        assert_eq!(found.source, 1);
        let found = extract("Who grants paid leave?", &sources, None).unwrap();
        assert_eq!(found.source, 0, "no kind asked: the best source answers");
    }

    #[test]
    fn a_line_broken_off_at_a_comma_comes_with_the_line_completing_it() {
        let long = "Requests to initiate a purchase of furniture go through the furniture portal, \
                    which handles chairs, desks, monitors, lamps, whiteboards and every other \
                    piece of office equipment that a team might need when it moves into a new \
                    office or grows by a few people over a quarter.";
        let sources = [source(
            "Business cards",
            &format!(
                "To initiate your request,\nHead to https://envisionprintservices.com and \
                 create an account.\n{long}"
            ),
        )];
        assert_eq!(
            quoted("how do I initiate a request?", &sources)[..2],
            [
                "To initiate your request,",
                "Head to https://envisionprintservices.com and create an account."
            ]
        );
    }

    #[test]
    fn a_marked_item_comes_with_its_own_unmarked_lines() {
        let question = Question::new("週3日勤務の従業員だと？");
        let text = "1. 次のとおり年次有給休暇を与える。\n3. 週所定労働日数が3日の従業員\n\
                    0.5年: 5日 · 1.5年: 6日\n4. 週所定労働日数が2日の従業員\n0.5年: 3日 · 1.5年: 4日";
        let ranked = ranked_by_words(&question, text);
        let lead = ranked.order[0];
        let lines: Vec<&str> = ranked
            .list_of(lead, text)
            .into_iter()
            .map(|index| &text[ranked.candidates[index].range.clone()])
            .collect();
        assert_eq!(
            (&text[ranked.candidates[lead].range.clone()], lines),
            (
                "3. 週所定労働日数が3日の従業員",
                vec![
                    "0.5年: 5日 · 1.5年: 6日",
                    "1. 次のとおり年次有給休暇を与える。"
                ]
            )
        );
        assert!(has_list_mark("3. 週") && has_list_mark("・項目") && !has_list_mark("0.5年: 5日"));
    }

    #[test]
    fn a_chunk_is_on_the_topic_its_headings_name() {
        let sources = [
            source(
                "保存期間 › 雇用保険関係 › 法定の保管義務",
                "完結の日から2年間。",
            ),
            source(
                "保存期間 › 労災保険関係 › 法定の保管義務",
                "完結の日から3年間。",
            ),
        ];
        let found = extract("労災の書類はどれくらいの期間とっておく？", &sources, None).unwrap();
        assert_eq!(found.source, 1, "the chunk under 労災保険関係");
        let headings = distinguishing_headings(&[(0, &sources[0]), (1, &sources[1])]);
        assert!(headings[1].contains("労災"));
        assert!(
            !headings[1].contains("保険") && !headings[1].contains("保存"),
            "the words every title read holds set none apart"
        );
    }

    #[test]
    fn an_elliptical_follow_up_takes_its_topic_from_the_question_before_it() {
        let sources = [source(
            "Security incidents",
            "Tell the security team about any phishing email you receive.\n\
             Report it within 1 hour.\n\
             Keep your browser up to date.\n\
             Back up your laptop every 2 weeks.",
        )];
        assert_eq!(
            quoted(
                "how quickly?\nwho do I tell about a phishing email?",
                &sources
            ),
            ["Report it within 1 hour."],
            "the time stated beside the earlier question's topic, not the backup schedule"
        );
    }

    #[test]
    fn the_row_whose_range_covers_the_questions_case_is_quoted() {
        let sources = [source(
            "通勤手当",
            "通勤手当は次のとおり支給する。\n\
             移動区間の距離: 2km未満 · 1日あたりの支給額: 支給しない\n\
             移動区間の距離: 10km以上15km未満 · 1日あたりの支給額: 355円\n\
             移動区間の距離: 2km以上10km未満 · 1日あたりの支給額: 210円\n\
             定期券を購入する場合は月額45,000円を上限とする。",
        )];
        let quotes = quoted(
            "片道5kmを自転車で通勤する場合、通勤手当は1日いくら？",
            &sources,
        );
        assert_eq!(
            quotes[..2],
            [
                "通勤手当は次のとおり支給する。",
                "移動区間の距離: 2km以上10km未満 · 1日あたりの支給額: 210円"
            ],
            "the row with the line that introduces it"
        );
        assert!(
            !quotes.iter().any(|quote| quote.contains("355円")),
            "{quotes:?}"
        );
    }

    #[test]
    fn a_source_sharing_no_word_of_the_question_gives_way_and_words_count_by_their_stems() {
        let sources = [
            source("Security", "Report phishing to the security team at once."),
            source(
                "Equipment",
                "Every employee receives a MacBook Pro or a ThinkPad. \
                 Laptops are replaced every 4 years.",
            ),
        ];
        let found = extract("What laptop will I get?", &sources, None).unwrap();
        assert_eq!(found.source, 1, "\"laptop\" is the stem of \"Laptops\"");
    }

    #[test]
    fn an_item_completing_a_line_that_states_the_answer_states_it_too() {
        let text = "Submit your request early.\nThree to five weeks in advance for:\n\
                    Conferences that cost more than $2,500, including travel\n\
                    The form asks for the cost of the conference.";
        let question = Question::new("how far ahead do I request a conference over $2,500?");
        let stated: Vec<bool> = candidates_of(&question, text)
            .iter()
            .map(|candidate| candidate.states_asked)
            .collect();
        assert_eq!(stated, [false, true, true, false]);
        let text = "手当は次のとおり1,000円減額する。\n入退社の場合\n減額は行わない";
        let question = Question::new("手当はいくら減る？");
        let stated: Vec<bool> = candidates_of(&question, text)
            .iter()
            .map(|candidate| candidate.states_asked)
            .collect();
        assert!(
            !stated[1],
            "an item below a sentence says its own: {stated:?}"
        );
    }

    #[test]
    fn a_list_item_comes_with_the_line_that_introduces_it_and_a_lead_in_with_its_items() {
        let item = format!(
            "Conference events that cost more than $2,500, {}",
            "including travel and registration, ".repeat(6)
        );
        let sources = [source(
            "Requests",
            &format!(
                "Fifteen days in advance for:\nTraining that costs more than $2,500\n\
                 Three to five weeks in advance for:\n{item}\nSpeaking events"
            ),
        )];
        assert_eq!(
            quoted(
                "how early do I ask for conference events over $2,500?",
                &sources
            ),
            ["Three to five weeks in advance for:", item.trim_end()],
            "the item fills the answer with its introducing line, not with the first list's"
        );
        let text = "定期に健康診断を行う。\n\
             健康診断を受ける者は、事前に以下の事項を会社に届け出なければならない。\n\
             1. 受診する病院\n2. 受診日\n健康診断の費用は会社が負担する。";
        let question = Question::new("健康診断の前に会社に何を届け出る？");
        let ranked = ranked_by_words(&question, text);
        let listed: Vec<&str> = ranked
            .list_of(1, text)
            .into_iter()
            .map(|index| &text[ranked.candidates[index].range.clone()])
            .collect();
        assert_eq!(listed, ["1. 受診する病院", "2. 受診日"]);
    }

    #[test]
    fn a_procedure_is_quoted_with_every_step() {
        let step = "Click the search tool (the magnifying glass icon) at the far right side of \
                    the menu bar at the top of your screen";
        let text = format!(
            "If the audio in Meet stopped working, follow these steps:\n1. {step}\n\
             2. {step} again\n3. Type terminal and press enter\n4. Run sudo killall coreaudiod\n\
             The office has spare headsets."
        );
        let sources = [source("Meet", &text)];
        let steps = quoted(
            "my audio in Meet stopped working, how do I fix it?",
            &sources,
        );
        assert_eq!(steps.len(), 5, "{steps:?}");
        assert!(steps[4].contains("coreaudiod"), "{steps:?}");
        let from_a_step = quoted("how do I run coreaudiod?", &sources);
        assert_eq!(
            from_a_step, steps,
            "the step that shares the words comes with its whole list"
        );
        let cut = quoted("why did my audio in Meet stop working?", &sources);
        assert!(
            cut.len() < 5,
            "not asked how: the answer stays short: {cut:?}"
        );
    }

    #[test]
    fn an_amount_beside_the_sentence_naming_the_topic_answers_when_none_shares_the_words() {
        let sources = [
            source(
                "Leave",
                "You can receive Administrative Leave in order to vote.\n\n\
                 You can receive up to 4 hours for each election event.\n\n\
                 Jury duty is Court Leave.",
            ),
            source("Tock", "Time not billed goes to line 1858 every week."),
        ];
        assert_eq!(
            quoted("How much time off do we get to go vote?", &sources)[0],
            "You can receive up to 4 hours for each election event."
        );
    }

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(columns("梅雨 ab"), 7);
        assert_eq!(columns("ＡＢ"), 4);
    }

    #[test]
    fn meaning_and_words_weigh_the_same_and_a_later_source_needs_both_to_win() {
        let question = Question::new("what days does a tock week run?");
        let text = "Each day of the week appears as a column.\n\
                    The week begins on Sunday and ends on Saturday.\n\
                    Submit the week by Friday.\n\
                    Ask your supervisor about overtime.";
        let ranked = |text: &str, near: Option<&[f64]>| {
            let near: Option<Vec<Nearness>> = near.map(|near| {
                near.iter()
                    .map(|&cosine| Nearness {
                        newest: cosine,
                        searched: cosine,
                    })
                    .collect()
            });
            Ranked::new(
                &question,
                text,
                candidates_of(&question, text),
                near.as_deref(),
                &HashSet::new(),
            )
            .unwrap()
        };
        assert_eq!(ranked(text, None).order[0], 0, "by words: day and week");
        let first = ranked(text, Some(&[0.70, 0.95, 0.80, 0.75]));
        assert_eq!(first.order[0], 1, "by meaning and words");
        let later = "Tock weeks run from Sunday to Saturday.";
        assert!(ranked(later, Some(&[0.96])).beats(&first));
        assert!(
            !ranked(later, Some(&[0.90])).beats(&first),
            "not as near as the first source's best"
        );
        assert!(
            !ranked("From Sunday to Saturday.", Some(&[0.99])).beats(&first),
            "nearer, but holding fewer of the question's words"
        );
    }

    #[test]
    fn filler_joins_a_short_answer_only_and_the_best_sentences_neighbour_always_may() {
        let question = Question::new("what days does a tock week run?");
        let filler = "Parking passes, the cafeteria menu and the fitness room's opening hours \
                      change every month, so check the building's notice board for the latest \
                      of them before you come in.";
        let text = format!(
            "The week begins on Sunday and ends on Saturday.\nIt is the same for every team.\n{filler}"
        );
        let quoted = |near: Option<Vec<Nearness>>| {
            let ranked = Ranked::new(
                &question,
                &text,
                candidates_of(&question, &text),
                near.as_deref(),
                &HashSet::new(),
            )
            .unwrap();
            ranked.quotes(&text).len()
        };
        let near = [0.95, 0.70, 0.70].map(|cosine| Nearness {
            newest: cosine,
            searched: cosine,
        });
        assert!(text.chars().count() > FILLER_CHARACTERS && columns(&text) <= ANSWER_COLUMNS);
        assert_eq!(
            quoted(Some(near.to_vec())),
            2,
            "the neighbour joins, the filler not"
        );
        assert_eq!(
            quoted(None),
            3,
            "without an embedder no sentence is below the average"
        );
    }

    #[test]
    fn a_thing_asked_after_that_no_source_names_is_refused() {
        let leave = source(
            "休暇",
            "年次有給休暇は入社6か月後に10日与える。慶弔休暇は結婚の際に5日与える。",
        );
        assert_eq!(
            extract("誕生日休暇ってある？", std::slice::from_ref(&leave), None),
            Err(NotQuoted::NotMentioned("誕生日休暇".to_string()))
        );
        let birthday = source("休暇", "誕生日には特別休暇を1日与える。");
        assert!(extract("誕生日休暇ってある？", &[leave, birthday], None).is_ok());
        let benefits = source(
            "Benefits",
            "GSA offers health, dental and vision insurance.",
        );
        assert_eq!(
            extract(
                "unrelated, but does GSA offer pet insurance?",
                std::slice::from_ref(&benefits),
                None
            ),
            Err(NotQuoted::NotMentioned("pet insurance".to_string()))
        );
        assert!(extract("does GSA offer dental insurance?", &[benefits], None).is_ok());
        let japanese = source("福利厚生", "ペット保険の補助はない。");
        assert!(
            extract("does GSA offer pet insurance?", &[japanese], None).is_ok(),
            "a page in the other language names nothing in the question's words"
        );
    }

    #[test]
    fn an_amount_for_a_case_no_source_names_is_refused() {
        let leave = source(
            "Leave",
            "You earn 4 hours of paid sick leave per pay period. You may take 5 days of administrative leave to move with a military spouse.",
        );
        assert_eq!(
            extract(
                "how many days of paid leave do we get for our own wedding?",
                std::slice::from_ref(&leave),
                None
            ),
            Err(NotQuoted::NotMentioned("wedding".to_string()))
        );
        assert_eq!(
            extract(
                "how much paid time off do interns get?",
                std::slice::from_ref(&leave),
                None
            ),
            Err(NotQuoted::NotMentioned("interns".to_string()))
        );
        assert!(
            extract(
                "how many days of admin leave do I get to move with my spouse?",
                &[leave],
                None
            )
            .is_ok(),
            "admin is administrative clipped"
        );
        let japanese = source(
            "休暇",
            "年次有給休暇は勤続6か月で10日与える。休暇開始日は休暇事由の発生日とする。",
        );
        assert_eq!(
            extract(
                "リフレッシュ休暇って勤続何年でもらえる？",
                std::slice::from_ref(&japanese),
                None
            ),
            Err(NotQuoted::NotMentioned("リフレッシュ休暇".to_string()))
        );
        assert!(extract("年次有給休暇って勤続何か月でもらえる？", &[japanese], None).is_ok());
    }

    #[test]
    fn no_text_no_answer() {
        assert_eq!(
            extract("anything?", &[source("empty", "  ")], None),
            Err(NotQuoted::Nothing)
        );
        assert_eq!(extract("anything?", &[], None), Err(NotQuoted::Nothing));
    }

    #[test]
    fn an_amount_no_source_states_is_not_quoted() {
        let sources = [
            source(
                "Home office",
                "The home office budget covers desks and chairs.",
            ),
            source("Equipment", "Laptops are provided by IT."),
        ];
        assert_eq!(
            extract("How much is the home office budget?", &sources, None),
            Err(NotQuoted::NotStated(Asked::Amount))
        );
        let elsewhere = [source(
            "Sabbatical",
            "A sabbatical needs your manager's approval. Agreements are signed in HR Links. \
             Our team has grown to 40 people.",
        )];
        assert_eq!(
            extract("How many weeks of sabbatical do we get?", &elsewhere, None),
            Err(NotQuoted::NotStated(Asked::Number)),
            "a number stated about something else, away from the topic, is no answer"
        );
        let parking = [source("Parking", "Parking is free on weekends.")];
        assert!(
            extract("When is parking free?", &parking, None).is_ok(),
            "a time is often stated in words no detector knows"
        );
    }

    #[test]
    fn a_question_in_the_other_language_takes_the_sentence_stating_what_it_asks() {
        let sources = [source(
            "賃金規程 › 通勤手当",
            "会社は、通勤する従業員に通勤手当を支給する。通勤手当は月額10,000円を上限とする。",
        )];
        assert_eq!(
            quoted(
                "What is the monthly cap on the commuting allowance?",
                &sources
            ),
            ["通勤手当は月額10,000円を上限とする。"]
        );
    }
}
