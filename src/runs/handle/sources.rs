//! The `source_status` handle: the last status each source reported, written by hub processes
//! and read by the dashboard (a separate process). The store is the only thing they share, so
//! the dashboard shows live sources without a hub of its own.

use super::super::error::StoreError;
use super::super::records::SourceStatusRecord;
use super::super::{Store, now_ms};

/// Source statuses.
pub struct SourceStatuses<'a>(pub(in crate::runs) &'a Store);

impl SourceStatuses<'_> {
    /// Records the current status of a source, replacing what was recorded before.
    pub async fn record(
        &self,
        name: &str,
        status: &str,
        tool_count: usize,
        error: Option<&str>,
    ) -> Result<(), StoreError> {
        let record = SourceStatusRecord {
            name: name.to_string(),
            status: status.to_string(),
            tool_count,
            error: error.map(str::to_string),
            updated_at_ms: now_ms(),
        };
        self.0
            .call(move |db, _| db.record_source_status(&record))
            .await
    }

    /// Every recorded source status, by name.
    pub async fn list(&self) -> Result<Vec<SourceStatusRecord>, StoreError> {
        self.0.call(move |db, _| db.source_statuses()).await
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::testing::store_in;

    #[tokio::test]
    async fn the_latest_status_of_each_source_wins() {
        let dir = tempfile::tempdir().unwrap();
        let store = store_in(dir.path()).await;
        let statuses = store.source_status();
        assert!(statuses.list().await.unwrap().is_empty());
        statuses
            .record("time", "connecting", 0, None)
            .await
            .unwrap();
        statuses
            .record("everything", "failed", 0, Some("spawn failed"))
            .await
            .unwrap();
        statuses.record("time", "ready", 2, None).await.unwrap();
        let listed = statuses.list().await.unwrap();
        let summary: Vec<_> = listed
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.status.as_str(),
                    s.tool_count,
                    s.error.as_deref(),
                )
            })
            .collect();
        assert_eq!(
            summary,
            [
                ("everything", "failed", 0, Some("spawn failed")),
                ("time", "ready", 2, None)
            ]
        );
    }
}
