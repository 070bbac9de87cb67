//! The vocabulary every namespace's index shares: stemmed terms as small integers, how many
//! documents contain each (BM25F's corpus statistics, global so scores compare across
//! namespaces), and the words already stemmed.

use super::{Map, TermId, heap_string, map_entry_bytes};

/// Stemmed terms as small integers, with how many documents contain each, over all namespaces.
/// Ids of terms no document uses any more are reused, so replacing sources forever does not grow
/// it.
#[derive(Debug, Default)]
pub(super) struct Vocabulary {
    ids: Map<String, TermId>,
    terms: Vec<String>,
    doc_freq: Vec<u32>,
    free: Vec<TermId>,
    /// Each lower-case word as it appears in tool texts → its term, or `None` for a stop word.
    /// Stemming and the stop-word check were half of an index build, and sources repeat each
    /// other's words, so this outlives one build. It is emptied whenever a term id is freed (an
    /// entry could otherwise point at a reused id), which also bounds it by the live words.
    pub(super) words: Map<String, Option<TermId>>,
}

impl Vocabulary {
    pub(super) fn id(&self, term: &str) -> Option<TermId> {
        self.ids.get(term).copied()
    }

    pub(super) fn intern(&mut self, term: &str) -> TermId {
        if let Some(id) = self.id(term) {
            return id;
        }
        let id = match self.free.pop() {
            Some(id) => {
                self.terms[id as usize] = term.to_string();
                id
            }
            None => {
                // More distinct words than u32 ids cannot fit in memory first.
                let id = TermId::try_from(self.terms.len()).unwrap_or(TermId::MAX);
                self.terms.push(term.to_string());
                self.doc_freq.push(0);
                id
            }
        };
        self.ids.insert(term.to_string(), id);
        id
    }

    pub(super) fn doc_freq(&self, id: TermId) -> u32 {
        self.doc_freq.get(id as usize).copied().unwrap_or(0)
    }

    pub(super) fn add_docs(&mut self, id: TermId, count: u32) {
        if let Some(df) = self.doc_freq.get_mut(id as usize) {
            *df = df.saturating_add(count);
        }
    }

    pub(super) fn remove_docs(&mut self, id: TermId, count: u32) {
        let Some(df) = self.doc_freq.get_mut(id as usize) else {
            return;
        };
        *df = df.saturating_sub(count);
        if *df == 0 {
            let term = std::mem::take(&mut self.terms[id as usize]);
            self.ids.remove(&term);
            self.free.push(id);
            self.words.clear();
        }
    }

    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Every term in use, with how many documents contain it.
    pub(super) fn terms(&self) -> impl Iterator<Item = (&str, u32)> {
        self.terms
            .iter()
            .zip(&self.doc_freq)
            .filter(|(term, _)| !term.is_empty())
            .map(|(term, df)| (term.as_str(), *df))
    }

    /// The heap it holds, in bytes (see `SearchIndex::heap_bytes`).
    pub(super) fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let (string, map_entry) = (heap_string, map_entry_bytes);
        self.ids.capacity() * map_entry(size_of::<String>(), size_of::<TermId>())
            + self.ids.keys().map(string).sum::<usize>()
            + self.terms.capacity() * size_of::<String>()
            + self.terms.iter().map(string).sum::<usize>()
            + self.doc_freq.capacity() * size_of::<u32>()
            + self.words.capacity() * map_entry(size_of::<String>(), size_of::<Option<TermId>>())
            + self.words.keys().map(string).sum::<usize>()
    }
}
